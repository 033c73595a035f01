package localapi

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func startServer(t *testing.T, v Views) (string, *Server) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "api", "host.sock")
	s, err := Listen(sock, v)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	t.Cleanup(func() {
		if err := s.Shutdown(context.WithoutCancel(t.Context())); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return sock, s
}

func TestPluginsRoundTrip(t *testing.T) {
	want := []PluginInfo{{Name: "containerd", Kind: "runtime", State: "running", Ready: true, Restarts: 2}}
	sock, _ := startServer(t, Views{Plugins: func() []PluginInfo { return want }, Ready: func() (bool, string) { return true, "" }})

	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("socket mode = %o; want 600", got)
	}
	got, err := NewClient(sock).Plugins(t.Context())
	if err != nil {
		t.Fatalf("Plugins: %v", err)
	}
	if len(got) != 1 || got[0].Name != "containerd" || got[0].Restarts != 2 || !got[0].Ready {
		t.Errorf("Plugins = %+v; want %+v", got, want)
	}
}

func TestReadyz(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ready bool
		code  int
	}{
		{"ready", true, http.StatusOK},
		{"not ready", false, http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock, _ := startServer(t, Views{Plugins: func() []PluginInfo { return nil }, Ready: func() (bool, string) { return tc.ready, "plugin csi not ready" }})
			c := NewClient(sock)
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://host/readyz", nil)
			resp, err := c.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Errorf("GET /readyz = %d; want %d", resp.StatusCode, tc.code)
			}
		})
	}
}

func TestListenSocketChecks(t *testing.T) {
	v := Views{Plugins: func() []PluginInfo { return nil }, Ready: func() (bool, string) { return true, "" }}

	t.Run("stale socket is replaced", func(t *testing.T) {
		sock := filepath.Join(t.TempDir(), "host.sock")
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		s, err := Listen(sock, v)
		if err != nil {
			t.Fatalf("Listen over a stale socket: %v", err)
		}
		s.Shutdown(context.WithoutCancel(t.Context()))
	})

	t.Run("socket in use is refused", func(t *testing.T) {
		sock, _ := startServer(t, v)
		if _, err := Listen(sock, v); err == nil || !strings.Contains(err.Error(), "in use") {
			t.Errorf("Listen on a served socket: err = %v; want an in-use error", err)
		}
	})

	t.Run("regular file is refused", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "host.sock")
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Listen(path, v); err == nil || !strings.Contains(err.Error(), "not a socket") {
			t.Errorf("Listen on a regular file: err = %v; want not-a-socket error", err)
		}
	})
}
