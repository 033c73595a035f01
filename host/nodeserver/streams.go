package nodeserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/hashicorp/go-hclog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/proxy"
	translator "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/streaming/pkg/httpstream/wsstream"

	"github.com/podhost/podhost/host/localapi"
)

// StreamOptions are the streams an exec or attach asks for.
type StreamOptions struct {
	Stdin, Stdout, Stderr, TTY bool
}

// Streams finds where the runtime serves a stream: a URL on its own
// streaming server. A missing pod or container is an error wrapping
// localapi.ErrNotFound, naming it. uid, when not empty, must be the pod's.
type Streams interface {
	Exec(ctx context.Context, namespace, pod string, uid types.UID, container string, cmd []string, opts StreamOptions) (*url.URL, error)
	Attach(ctx context.Context, namespace, pod string, uid types.UID, container string, opts StreamOptions) (*url.URL, error)
	PortForward(ctx context.Context, namespace, pod string, uid types.UID, ports []int32) (*url.URL, error)
}

// handleStreams registers the kubelet's streaming endpoints, with and
// without the pod's UID in the path, for GET and POST as the kubelet.
func (s *Server) handleStreams(mux *http.ServeMux) {
	for _, p := range []string{"/exec/{ns}/{pod}/{container}", "/exec/{ns}/{pod}/{uid}/{container}"} {
		mux.HandleFunc(p, s.exec)
	}
	for _, p := range []string{"/attach/{ns}/{pod}/{container}", "/attach/{ns}/{pod}/{uid}/{container}"} {
		mux.HandleFunc(p, s.attach)
	}
	for _, p := range []string{"/portForward/{ns}/{pod}", "/portForward/{ns}/{pod}/{uid}"} {
		mux.HandleFunc(p, s.portForward)
	}
}

func (s *Server) exec(w http.ResponseWriter, r *http.Request) {
	s.remoteCommand(w, r, func(opts StreamOptions) (*url.URL, error) {
		cmd := r.URL.Query()["command"]
		if len(cmd) == 0 {
			return nil, fmt.Errorf("%w: query parameter \"command\" is required", errBadRequest)
		}
		return s.opts.Streams.Exec(r.Context(), r.PathValue("ns"), r.PathValue("pod"), types.UID(r.PathValue("uid")),
			r.PathValue("container"), cmd, opts)
	})
}

func (s *Server) attach(w http.ResponseWriter, r *http.Request) {
	s.remoteCommand(w, r, func(opts StreamOptions) (*url.URL, error) {
		return s.opts.Streams.Attach(r.Context(), r.PathValue("ns"), r.PathValue("pod"), types.UID(r.PathValue("uid")),
			r.PathValue("container"), opts)
	})
}

var errBadRequest = errors.New("bad request")

// remoteCommand serves an exec or attach as the kubelet does: it asks the
// runtime for its URL and proxies the upgraded connection there (SPDY).
// A WebSocket request of the v5 protocol, which the API server passes on
// since the node declares ExtendWebSocketsToKubelet, is translated to
// SPDY towards the runtime, whose streaming server speaks older
// protocols only; the translator sends the exit code back in v5's status.
func (s *Server) remoteCommand(w http.ResponseWriter, r *http.Request, find func(StreamOptions) (*url.URL, error)) {
	o, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	opts := StreamOptions{Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, TTY: o.TTY}
	loc, err := find(opts)
	if err != nil {
		s.streamError(w, r, err)
		return
	}
	var h http.Handler = proxy.NewUpgradeAwareHandler(loc, nil, false, true, &responder{s.opts.Logger})
	if wsstream.IsWebSocketRequestWithStreamCloseProtocol(r) {
		h = translator.NewStreamTranslatorHandler(loc, nil, 0, translator.Options{
			Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, Tty: opts.TTY})
	}
	h.ServeHTTP(w, r)
}

// portForward serves a port-forward as the kubelet does: SPDY proxied to
// the runtime's URL, or SPDY tunnelled in a WebSocket (the protocol
// kubectl uses first), unwrapped here.
func (s *Server) portForward(w http.ResponseWriter, r *http.Request) {
	tunnel := wsstream.IsWebSocketRequestWithTunnelingProtocol(r)
	var ports []int32
	if !tunnel {
		o, err := portforward.NewV4Options(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ports = o.Ports
	}
	loc, err := s.opts.Streams.PortForward(r.Context(), r.PathValue("ns"), r.PathValue("pod"), types.UID(r.PathValue("uid")), ports)
	if err != nil {
		s.streamError(w, r, err)
		return
	}
	var h http.Handler = proxy.NewUpgradeAwareHandler(loc, nil, false, true, &responder{s.opts.Logger})
	if tunnel {
		h = translator.NewTunnelingHandler(h)
	}
	h.ServeHTTP(w, r)
}

func (s *Server) streamError(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, localapi.ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, errBadRequest):
		code = http.StatusBadRequest
	}
	s.opts.Logger.Debug("refused a stream", "path", r.URL.Path, "err", err)
	http.Error(w, err.Error(), code)
}

// responder reports a failed proxy to the runtime's streaming server,
// with the code of an API status error (400 for a request that is no
// upgrade), else 500.
type responder struct{ log hclog.Logger }

func (p *responder) Error(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Code != 0 {
		code = int(st.Status().Code)
	}
	p.log.Warn("proxying a stream to the runtime", "path", r.URL.Path, "err", err)
	http.Error(w, err.Error(), code)
}
