package sdk

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
)

// EnvProfileDir names the environment variable that makes Serve serve Go's
// runtime profiles (net/http/pprof: /debug/pprof/profile, heap, goroutine,
// …) on the unix socket DIR/NAME.sock, NAME being Plugin.Name, for as long
// as the plugin runs. The host passes its environment on to its plugins,
// so `PODHOST_PLUGIN_PPROF_DIR=/run/podhost-pprof podhost run` profiles
// every plugin; left unset, nothing is served. The socket is mode 0600 in
// a directory the operator chose: whoever may set a plugin's environment
// may read its profiles.
const EnvProfileDir = "PODHOST_PLUGIN_PPROF_DIR"

// serveProfiles serves the profiles when EnvProfileDir is set and returns
// the function that stops it. A failure is reported on stderr, which the
// host forwards to its log, and leaves the plugin running without them.
func serveProfiles(name string) (stop func()) {
	dir := os.Getenv(EnvProfileDir)
	if dir == "" {
		return func() {}
	}
	l, err := listenProfiles(filepath.Join(dir, name+".sock"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "podhost plugin %q: no profiles: %v\n", name, err)
		return func() {}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(l) }()
	return func() { _ = srv.Close() }
}

// listenProfiles listens on the socket at path, replacing one a previous
// instance left, readable by the owner only.
func listenProfiles(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}
