package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestCurl(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("echo " + r.URL.Query().Get("msg")))
	}))
	defer srv.Close()
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{srv.URL + "/echo?msg=poststart"}, 0, "echo poststart"},
		{[]string{"-s", srv.URL + "/missing"}, 0, "404 page not found\n"},
		{[]string{"-f", srv.URL + "/missing"}, 22, ""},
		{[]string{"http://127.0.0.1:1/"}, 7, ""},
		{[]string{"ftp://x/"}, 3, ""},
		{[]string{"-Z", srv.URL}, 2, ""},
		{[]string{"-g", "-q", "-s", "--max-time", "15", "--connect-timeout", "1", srv.URL + "/echo?msg=hostName"}, 0, "echo hostName"},
		{[]string{"-q", "-s", "-o", "/dev/null", "-w", "%{http_code}", srv.URL + "/missing"}, 0, "404"},
		{[]string{"-m"}, 2, ""},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		if code := run(tt.args, &out, &errOut); code != tt.code || out.String() != tt.out {
			t.Errorf("curl %q: exit %d output %q (%s); want %d %q", tt.args, code, out.String(), errOut.String(), tt.code, tt.out)
		}
	}
}
