package localapi_test

import (
	"context"
	"errors"
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

// dialModeEnv makes the test binary dial the unix socket it names and print
// the outcome instead of running tests: TestSocketRefusesOtherUsers runs it
// as another user.
const dialModeEnv = "PODHOST_LOCALAPI_TEST_DIAL"

func TestMain(m *testing.M) {
	if sock := os.Getenv(dialModeEnv); sock != "" {
		c, err := net.Dial("unix", sock)
		switch {
		case errors.Is(err, syscall.EACCES):
			fmt.Println("EACCES")
		case err != nil:
			fmt.Println("error:", err)
		default:
			c.Close()
			fmt.Println("connected")
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSocketRefusesOtherUsers(t *testing.T) {
	if testing.Short() {
		t.Skip("switches to another user (root): not under -short")
	}
	if os.Geteuid() != 0 {
		t.Fatal("this test must run as root to switch to another user")
	}
	// Everything on the way to the socket and the binary is open to all, so
	// the socket's own mode is what decides.
	dir := t.TempDir()
	for d := dir; d != filepath.Dir(d) && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "dialer")
	copyFile(t, self, bin)

	sockDir := filepath.Join(dir, "api")
	if err := os.Mkdir(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "host.sock")
	_, _, views := fixture(t)
	s, err := localapi.Listen(sock, views)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown(context.WithoutCancel(t.Context())) })

	for _, tc := range []struct {
		name string
		mode os.FileMode
		uid  uint32
		want string
	}{
		{"root connects", 0o600, 0, "connected"},
		{"nobody is refused", 0o600, 65534, "EACCES"},
		// Proves the check above can fail: the same user gets in once the
		// socket is opened to everyone.
		{"nobody connects to a 0666 socket", 0o666, 65534, "connected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.Chmod(sock, tc.mode); err != nil {
				t.Fatal(err)
			}
			defer os.Chmod(sock, 0o600)
			cmd := exec.CommandContext(t.Context(), bin)
			cmd.Env = append(os.Environ(), dialModeEnv+"="+sock)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: tc.uid, Gid: tc.uid}}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("dialer: %v\n%s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != tc.want {
				t.Errorf("uid %d dialing a %04o socket: %s; want %s", tc.uid, tc.mode, got, tc.want)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeToken(t *testing.T, mode os.FileMode, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

func TestTCPRequiresToken(t *testing.T) {
	addr := serveTCP(t, "s3cret\n")
	url := "http://" + addr

	for _, tc := range []struct {
		name, path, auth string
		code             int
	}{
		{"no token", "/v1/pods", "", 401},
		{"wrong token", "/v1/pods", "Bearer s3cre", 401},
		{"longer wrong token", "/v1/pods", "Bearer s3cret-and-more", 401},
		{"not bearer", "/v1/pods", "Basic s3cret", 401},
		{"no token on healthz either", "/healthz", "", 401},
		{"no token on metrics either", "/metrics", "", 401},
		{"right token", "/v1/pods", "Bearer s3cret", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), "GET", url+tc.path, nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Errorf("GET %s with %q = %d; want %d", tc.path, tc.auth, resp.StatusCode, tc.code)
			}
		})
	}

	t.Run("client with the token", func(t *testing.T) {
		c, err := localapi.NewTCPClient(addr, "s3cret")
		if err != nil {
			t.Fatal(err)
		}
		if pods, err := c.Pods(t.Context()); err != nil || len(pods) != 2 {
			t.Errorf("Pods = %v, %v", pods, err)
		}
		bad, _ := localapi.NewTCPClient(addr, "nope")
		var apiErr *localapi.APIError
		if _, err := bad.Pods(t.Context()); !errors.As(err, &apiErr) || apiErr.StatusCode != 401 {
			t.Errorf("Pods with a wrong token: %v; want a 401", err)
		}
	})
}

func TestTokenFileChecks(t *testing.T) {
	_, _, views := fixture(t)
	for _, tc := range []struct {
		name    string
		mode    os.FileMode
		content string
		want    string
	}{
		{"world readable", 0o644, "tok", "mode 0644"},
		{"group readable", 0o640, "tok", "group or others"},
		{"empty", 0o600, " \n", "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := localapi.ListenTCP("127.0.0.1:0", writeToken(t, tc.mode, tc.content), views)
			if err == nil {
				s.Shutdown(t.Context())
				t.Fatal("ListenTCP accepted the token file")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want it to say %q", err, tc.want)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		if _, err := localapi.ListenTCP("127.0.0.1:0", filepath.Join(t.TempDir(), "none"), views); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v; want not-exist", err)
		}
	})
}
