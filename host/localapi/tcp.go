package localapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// ListenTCP listens on addr for the API, requiring on every request the
// bearer token held in tokenFile. The file must be a regular file that
// neither group nor others may read or write; the token is its content
// with surrounding white space removed, and must not be empty.
func ListenTCP(addr, tokenFile string, v Views) (*Server, error) {
	token, err := ReadTokenFile(tokenFile)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for the api on %s: %w", addr, err)
	}
	return &Server{
		ln:   ln,
		http: &http.Server{Handler: RequireToken(token, Handler(v)), ReadHeaderTimeout: 10 * time.Second},
	}, nil
}

const maxTokenSize = 4096

// ReadTokenFile reads a bearer token, refusing a file that group or others
// may access.
func ReadTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading api token: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("reading api token: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("api token file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("api token file %s has mode %04o: group or others may access it; make it 0600", path, perm)
	}
	buf, err := io.ReadAll(io.LimitReader(f, maxTokenSize+1))
	if err != nil {
		return "", fmt.Errorf("reading api token: %w", err)
	}
	if len(buf) > maxTokenSize {
		return "", fmt.Errorf("api token file %s is larger than %d bytes", path, maxTokenSize)
	}
	token := strings.TrimSpace(string(buf))
	if token == "" {
		return "", fmt.Errorf("api token file %s is empty", path)
	}
	return token, nil
}

var errUnauthorized = errors.New("unauthorized: give the api token as Authorization: Bearer <token>")

// RequireToken answers 401 to a request without "Authorization: Bearer
// <token>". Both sides are hashed before a constant-time comparison, so
// neither the token nor its length leaks through timing.
func RequireToken(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="podhost"`)
			writeJSON(w, http.StatusUnauthorized, ErrorBody{Error: errUnauthorized.Error()})
			return
		}
		next.ServeHTTP(w, r)
	})
}
