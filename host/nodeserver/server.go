package nodeserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/streamproxy"
)

// LogsFunc writes a container's log to w; a missing pod or container is an
// error wrapping localapi.ErrNotFound.
type LogsFunc func(ctx context.Context, namespace, pod string, opts localapi.LogOptions, w io.Writer) error

// Options configure a Server.
type Options struct {
	// Addr is the address to listen on, host:port.
	Addr string
	// CertFile and KeyFile are the serving certificate and its key.
	CertFile, KeyFile string
	// ClientCAFile holds the CAs whose client certificates are accepted.
	ClientCAFile string
	// Client reviews tokens and access; nil accepts client certificates
	// only.
	Client   kubernetes.Interface
	NodeName string
	Logs     LogsFunc
	// Streams finds the runtime's URLs for exec, attach and port-forward.
	Streams streamproxy.Streams
	// Stats serves /stats/summary and /metrics/resource; nil: not served.
	Stats Stats
	// Pods serves /pods; nil: not served.
	Pods PodsFunc
	// Metrics serves /metrics, the node's own Prometheus metrics; nil:
	// not served.
	Metrics prometheus.Gatherer
	Logger  hclog.Logger
}

// Server is the daemon endpoint.
type Server struct {
	opts Options
	auth *authorizer
	ln   net.Listener
	srv  *http.Server
}

// New checks the options, loads the certificates and listens on Addr.
func New(opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	switch {
	case opts.Addr == "":
		return nil, errors.New("nodeserver: address is empty")
	case opts.CertFile == "" || opts.KeyFile == "":
		return nil, errors.New("nodeserver: a serving certificate and key are required")
	case opts.ClientCAFile == "":
		return nil, errors.New("nodeserver: a client CA file is required")
	case opts.NodeName == "":
		return nil, errors.New("nodeserver: node name is empty")
	case opts.Logs == nil:
		return nil, errors.New("nodeserver: no logs reader")
	case opts.Streams == nil:
		return nil, errors.New("nodeserver: no streams")
	}
	cert, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("nodeserver: loading the serving certificate %s: %w", opts.CertFile, err)
	}
	caPEM, err := os.ReadFile(opts.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("nodeserver: reading the client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("nodeserver: client CA file %s holds no PEM certificate", opts.ClientCAFile)
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("nodeserver: %w", err)
	}
	s := &Server{opts: opts, auth: newAuthorizer(opts.Client, opts.NodeName), ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{ns}/{pod}/{container}", s.containerLogs)
	s.handleStreams(mux)
	s.handleStats(mux)
	s.srv = &http.Server{
		Handler:           s.authenticated(mux),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert}, ClientCAs: pool,
			ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12,
		},
		ErrorLog: opts.Logger.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
	}
	return s, nil
}

// Port is the port the server listens on (status.daemonEndpoints).
func (s *Server) Port() int32 { return int32(s.ln.Addr().(*net.TCPAddr).Port) }

// Close stops listening, for a server that will not be served.
func (s *Server) Close() error { return s.ln.Close() }

// Serve serves until ctx ends, then shuts down within 5 s.
func (s *Server) Serve(ctx context.Context) error {
	s.srv.BaseContext = func(net.Listener) context.Context { return ctx }
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(sctx)
	}()
	err := s.srv.ServeTLS(s.ln, "", "")
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *Server) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.auth.check(r); err != nil {
			code := http.StatusForbidden
			if errors.Is(err, errUnauthenticated) {
				code = http.StatusUnauthorized
			}
			s.opts.Logger.Debug("refused a request", "path", r.URL.Path, "remote", r.RemoteAddr, "err", err)
			http.Error(w, err.Error(), code)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) containerLogs(w http.ResponseWriter, r *http.Request) {
	opts, err := localapi.ParseLogOptions(r, time.Now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	opts.Container = r.PathValue("container")
	fw := localapi.NewFlushWriter(w)
	var out io.Writer = fw
	if v := r.URL.Query().Get("limitBytes"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			http.Error(w, fmt.Sprintf("query parameter \"limitBytes\": %q is not a positive integer", v), http.StatusBadRequest)
			return
		}
		out = &limitWriter{w: fw, left: n}
	}
	err = s.opts.Logs(r.Context(), r.PathValue("ns"), r.PathValue("pod"), opts, out)
	switch {
	case err == nil, fw.Wrote(), errors.Is(err, errLimit):
	case errors.Is(err, localapi.ErrNotFound):
		http.Error(w, err.Error(), http.StatusNotFound)
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

var errLimit = errors.New("limitBytes reached")

// limitWriter passes on at most left bytes, then fails with errLimit.
type limitWriter struct {
	w    io.Writer
	left int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errLimit
	}
	cut := p
	if int64(len(cut)) > l.left {
		cut = cut[:l.left]
	}
	n, err := l.w.Write(cut)
	l.left -= int64(n)
	if err == nil && len(cut) < len(p) {
		err = errLimit
	}
	return n, err
}
