package e2e

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/images/ociarchive"
	"github.com/podhost/podhost/test/crisetup"
)

// authRegistry is a real OCI distribution registry (go-containerregistry's
// pkg/registry, the one its own tests serve) on loopback behind HTTP basic
// auth, as a registry with an htpasswd file answers: a request without
// the user's password is 401 with a Basic challenge.
type authRegistry struct {
	host           string // 127.0.0.1:port
	user, password string
	denied         atomic.Int64 // requests answered 401
}

func startAuthRegistry(t *testing.T, user, password string) *authRegistry {
	t.Helper()
	r := &authRegistry{user: user, password: password}
	inner := registry.New()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.host = ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u, p, ok := req.BasicAuth()
		if !ok || u != r.user || p != r.password {
			r.denied.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="podhost-e2e"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, req)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return r
}

// trustFrom writes the hosts.toml that makes ctrd's CRI pull from the
// registry over plain HTTP (it is on loopback: nothing crosses the
// machine, and there is no certificate to make and trust). containerd
// 1.6 already speaks plain HTTP to a loopback registry without one (tried:
// the test passes without it); the file says so rather than leaning on
// that default.
func (r *authRegistry) trustFrom(t *testing.T, ctrd *crisetup.Containerd) {
	t.Helper()
	file := ctrd.RegistryHostsFile(r.host)
	doc := fmt.Sprintf("server = \"http://%s\"\n\n[host.\"http://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", r.host, r.host)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pushBusybox pushes the busybox image (localimages.Busybox) to the
// registry as repo:tag with the registry's credentials and returns its
// full name.
func (r *authRegistry) pushBusybox(t *testing.T, repo, tag string) string {
	t.Helper()
	bb, err := os.ReadFile(localimages.BusyboxPath)
	if err != nil {
		t.Fatal(err)
	}
	var archive bytes.Buffer
	img := localimages.Busybox(bb)
	img.Name = r.host + "/" + repo + ":" + tag
	if _, err := ociarchive.Write(&archive, img); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(&archive)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = b
	}
	var index struct {
		Manifests []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v, %d manifests", err, len(index.Manifests))
	}
	manifest := index.Manifests[0]
	for name, b := range files {
		hex, ok := strings.CutPrefix(name, "blobs/sha256/")
		if !ok || hex == "" || "sha256:"+hex == manifest.Digest {
			continue
		}
		loc := r.do(t, http.MethodPost, "/v2/"+repo+"/blobs/uploads/", "", nil, http.StatusAccepted).Header.Get("Location")
		sep := "?"
		if strings.Contains(loc, "?") {
			sep = "&"
		}
		r.do(t, http.MethodPut, loc+sep+"digest=sha256:"+hex, "application/octet-stream", b, http.StatusCreated)
	}
	r.do(t, http.MethodPut, "/v2/"+repo+"/manifests/"+tag, manifest.MediaType,
		files["blobs/sha256/"+strings.TrimPrefix(manifest.Digest, "sha256:")], http.StatusCreated)
	return img.Name
}

// do makes one authenticated registry request and wants status.
func (r *authRegistry) do(t *testing.T, method, path, contentType string, body []byte, status int) *http.Response {
	t.Helper()
	url := path
	if !strings.HasPrefix(url, "http") {
		url = "http://" + r.host + path
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.SetBasicAuth(r.user, r.password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("%s %s: %s %s; want %d", method, path, resp.Status, msg, status)
	}
	return resp
}
