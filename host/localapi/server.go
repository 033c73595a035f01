package localapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// Server serves the local API.
type Server struct {
	http *http.Server
	ln   net.Listener
	// socket is the unix socket's path, removed on Shutdown; empty for TCP.
	socket string
}

// Listen creates the unix socket at path with mode 0600, replacing a stale
// socket left by a previous host, and returns a server ready to Serve.
//
// The socket is never reachable under path with another mode: it is bound
// in a private directory (0700) beside path, restricted to 0600 there and
// only then renamed into place. (The umask would do it too, but it is
// process-wide: other goroutines creating files at the same time would
// get it.)
func Listen(path string, v Views) (*Server, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating api socket directory: %w", err)
	}
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	ln, err := listenPrivate(path)
	if err != nil {
		return nil, err
	}
	return &Server{
		ln:     ln,
		socket: path,
		http:   &http.Server{Handler: Handler(v), ReadHeaderTimeout: 10 * time.Second},
	}, nil
}

// listenPrivate binds a unix socket with mode 0600 and moves it to path.
func listenPrivate(path string) (net.Listener, error) {
	private, err := os.MkdirTemp(filepath.Dir(path), ".sock-")
	if err != nil {
		return nil, fmt.Errorf("creating private directory for api socket %s: %w", path, err)
	}
	defer os.RemoveAll(private)
	tmp := filepath.Join(private, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listening on api socket %s: %w", path, err)
	}
	// The socket leaves tmp; Shutdown removes it at path.
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("restricting api socket %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		ln.Close()
		return nil, fmt.Errorf("moving api socket into place at %s: %w", path, err)
	}
	return &unixListener{UnixListener: ln, addr: &net.UnixAddr{Name: path, Net: "unix"}}, nil
}

// unixListener reports the path the socket was moved to as its address.
type unixListener struct {
	*net.UnixListener
	addr net.Addr
}

func (l *unixListener) Addr() net.Addr { return l.addr }

// removeStaleSocket removes a socket nobody answers on; it refuses to remove
// anything that is not a socket, or a socket another host still serves.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking api socket %s: %w", path, err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("api socket %s exists and is not a socket", path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("api socket %s is in use: is another host running?", path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("removing stale api socket %s: %w", path, err)
	}
	return nil
}

// Serve serves until Shutdown; it returns nil after a Shutdown.
func (s *Server) Serve() error {
	err := s.http.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Addr is the address served: the socket path or the TCP address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Shutdown stops serving and removes the unix socket. Open streams (watch,
// follow) end when ctx is done.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		err = errors.Join(err, s.http.Close())
	}
	if s.socket == "" {
		return err
	}
	if rmErr := os.Remove(s.socket); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) && err == nil {
		err = rmErr
	}
	return err
}
