package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/podhost/podhost/host/localapi"
)

// TestAPIAccessControl: the API socket is mode 0600 and uid 65534 cannot
// use it (while the same user gets in once the socket is opened up, so the
// check can fail); the TCP listener refuses requests without the bearer
// token (401) and serves them with it, through the CLI too.
func TestAPIAccessControl(t *testing.T) {
	h := startPodHost(t)
	ctx := t.Context()

	defaultSock := filepath.Join(h.root, "host.sock")
	fi, err := os.Stat(defaultSock)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 || st.Uid != 0 {
		t.Errorf("%s: mode %s owner %d; want a socket, 0600, root", defaultSock, fi.Mode(), st.Uid)
	}

	// Everything on the way to the socket and to the CLI binary is open to
	// all, so the socket's own mode is what decides.
	open := t.TempDir()
	for d := open; d != filepath.Dir(d) && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cli := filepath.Join(open, "host")
	copyExecutable(t, h.bin, cli)
	sockDir := filepath.Join(open, "api")
	if err := os.Mkdir(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "host.sock")
	tokenFile := filepath.Join(h.dir, "token")
	if err := os.WriteFile(tokenFile, []byte("e2e-s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeTCPAddress(t)
	cfg, err := os.ReadFile(h.config)
	if err != nil {
		t.Fatal(err)
	}
	cfg = append(cfg, fmt.Sprintf("api:\n  socket: %s\n  tcpAddress: %s\n  tokenFile: %s\n", sock, addr, tokenFile)...)
	if err := os.WriteFile(h.config, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	h.sigtermHost()
	h.client = localapi.NewClient(sock)
	h.start()

	asNobody := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, cli, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Run("socket refuses other users", func(t *testing.T) {
		if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("configured socket %s: %v, %v; want mode 0600", sock, fi, err)
		}
		out, err := asNobody("pods", "list", "--socket", sock)
		if err == nil || !strings.Contains(out, "permission denied") {
			t.Errorf("uid 65534 `podhost pods list`: %v\n%s\nwant permission denied", err, out)
		}
		// The same user gets in once the socket is open to all.
		if err := os.Chmod(sock, 0o666); err != nil {
			t.Fatal(err)
		}
		out, err = asNobody("pods", "list", "--socket", sock)
		if err := os.Chmod(sock, 0o600); err != nil {
			t.Fatal(err)
		}
		if err != nil || !strings.Contains(out, "NAMESPACE/NAME") {
			t.Errorf("uid 65534 on a 0666 socket: %v\n%s\nwant the pod list (the check above could not fail otherwise)", err, out)
		}
	})

	t.Run("TCP requires the token", func(t *testing.T) {
		for _, tc := range []struct {
			name, auth string
			code       int
		}{
			{"no token", "", http.StatusUnauthorized},
			{"wrong token", "Bearer nope", http.StatusUnauthorized},
			{"wrong scheme", "Basic ZTJlLXMzY3JldA==", http.StatusUnauthorized},
			{"token", "Bearer e2e-s3cret", http.StatusOK},
		} {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/pods", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Errorf("%s: GET /v1/pods answered %d; want %d\n%s", tc.name, resp.StatusCode, tc.code, body)
			}
		}
		// A write without the token is refused too, and changes nothing.
		resp, err := http.Post("http://"+addr+"/v1/pods", "application/json", strings.NewReader(`{"apiVersion":"v1","kind":"Pod"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST /v1/pods without a token answered %d; want 401", resp.StatusCode)
		}
		out, err := exec.CommandContext(ctx, h.bin, "pods", "list", "--server", "http://"+addr, "--token-file", tokenFile).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "NAMESPACE/NAME") {
			t.Errorf("podhost pods list --server --token-file: %v\n%s", err, out)
		}
	})
}

// copyExecutable copies the binary at from to to, mode 0755.
func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(to, 0o755); err != nil {
		t.Fatal(err)
	}
}

// freeTCPAddress returns a loopback address with a port free right now.
func freeTCPAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
