package localapi_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podhost/podhost/host/localapi"
)

func TestPprofOnTheUnixSocket(t *testing.T) {
	_, _, views := fixture(t)
	sock := filepath.Join(t.TempDir(), "host.sock")
	s, err := localapi.Listen(sock, views)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown(context.WithoutCancel(t.Context())) })
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	for _, tc := range []struct {
		path, want string
	}{
		{"/debug/pprof/", "goroutine"},
		{"/debug/pprof/goroutine?debug=1", "goroutine profile:"},
		{"/debug/pprof/cmdline", ""},
		{"/debug/pprof/heap", ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			code, body := get(t, client, "http://podhost"+tc.path, "")
			if code != http.StatusOK || !strings.Contains(body, tc.want) {
				t.Errorf("got %d %.200q; want 200 with %q", code, body, tc.want)
			}
		})
	}
}

func TestPprofOnTCPNeedsTheToken(t *testing.T) {
	url := "http://" + serveTCP(t, "s3cret\n")
	for _, tc := range []struct {
		name, path, auth string
		code             int
	}{
		{"no token", "/debug/pprof/", "", http.StatusUnauthorized},
		{"no token, a profile", "/debug/pprof/goroutine?debug=1", "", http.StatusUnauthorized},
		{"wrong token", "/debug/pprof/heap", "Bearer s3cre", http.StatusUnauthorized},
		// The token already allows running any pod: profiling adds nothing.
		{"the token", "/debug/pprof/goroutine?debug=1", "Bearer s3cret", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, http.DefaultClient, url+tc.path, tc.auth)
			if code != tc.code {
				t.Errorf("got %d %.200q; want %d", code, body, tc.code)
			}
			if code == http.StatusUnauthorized && strings.Contains(body, "goroutine") {
				t.Errorf("refused, but the body tells of goroutines: %.200q", body)
			}
		})
	}
}

// serveTCP serves the fixture's views on a TCP port of the loopback
// behind token until t ends, and returns its address.
func serveTCP(t *testing.T, token string) string {
	t.Helper()
	_, _, views := fixture(t)
	s, err := localapi.ListenTCP("127.0.0.1:0", writeToken(t, 0o600, token), views)
	if err != nil {
		t.Fatalf("ListenTCP: %v", err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown(context.WithoutCancel(t.Context())) })
	return s.Addr().String()
}

func get(t *testing.T, c *http.Client, url, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}
