package sdk

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeProfiles(t *testing.T) {
	tests := []struct {
		name  string
		set   bool
		stale bool // a socket file of an earlier instance is in the way
	}{
		{"unset: nothing is served", false, false},
		{"set: the socket serves pprof", true, false},
		{"set, over an earlier instance's socket", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pprof")
			sock := filepath.Join(dir, "plugin-x.sock")
			if tt.set {
				t.Setenv(EnvProfileDir, dir)
			} else {
				t.Setenv(EnvProfileDir, "")
			}
			if tt.stale {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(sock, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			stop := serveProfiles("plugin-x")
			defer stop()
			st, err := os.Stat(sock)
			if !tt.set {
				if err == nil {
					t.Fatalf("socket %s exists; want none with %s unset", sock, EnvProfileDir)
				}
				return
			}
			if err != nil {
				t.Fatalf("no socket: %v", err)
			}
			if st.Mode()&os.ModeSocket == 0 || st.Mode().Perm() != 0o600 {
				t.Errorf("socket mode %v; want a socket, 0600", st.Mode())
			}
			client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "unix", sock)
			}}}
			resp, err := client.Get("http://plugin/debug/pprof/goroutine?debug=1")
			if err != nil {
				t.Fatalf("GET goroutine profile: %v", err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine profile:") {
				t.Errorf("status %d, body %.80q; want 200 and a goroutine profile", resp.StatusCode, body)
			}
		})
	}
}
