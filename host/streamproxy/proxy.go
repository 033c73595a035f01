package streamproxy

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
)

// Options are the streams an exec or attach asks for.
type Options struct {
	Stdin, Stdout, Stderr, TTY bool
}

// Streams finds where the runtime serves a stream: a URL on its own
// streaming server. uid, when not empty, must be the pod's. A missing pod
// or container is an error the endpoint's Refuse maps to 404, naming it.
type Streams interface {
	Exec(ctx context.Context, namespace, pod string, uid types.UID, container string, cmd []string, opts Options) (*url.URL, error)
	Attach(ctx context.Context, namespace, pod string, uid types.UID, container string, opts Options) (*url.URL, error)
	PortForward(ctx context.Context, namespace, pod string, uid types.UID, ports []int32) (*url.URL, error)
}

// ErrBadRequest is wrapped by the errors of a request that does not say
// what to stream (no command, a bad port, streams that do not add up).
var ErrBadRequest = errors.New("bad request")

// Target names the pod, and for exec and attach the container, of a
// stream; UID may be empty.
type Target struct {
	Namespace, Pod string
	UID            types.UID
	Container      string
}

// Proxy serves streams of the pods Streams finds.
type Proxy struct {
	Streams Streams
	// Refuse answers a stream that is not served: err wraps ErrBadRequest,
	// or is Streams' error.
	Refuse func(w http.ResponseWriter, r *http.Request, err error)
	Logger hclog.Logger
}

// Exec serves an exec of the query's "command" in the target container.
func (p *Proxy) Exec(w http.ResponseWriter, r *http.Request, t Target) {
	p.remoteCommand(w, r, func(opts Options) (*url.URL, error) {
		cmd := r.URL.Query()["command"]
		if len(cmd) == 0 {
			return nil, fmt.Errorf("%w: query parameter \"command\" is required", ErrBadRequest)
		}
		return p.Streams.Exec(r.Context(), t.Namespace, t.Pod, t.UID, t.Container, cmd, opts)
	})
}

// Attach serves an attach to the target container.
func (p *Proxy) Attach(w http.ResponseWriter, r *http.Request, t Target) {
	p.remoteCommand(w, r, func(opts Options) (*url.URL, error) {
		return p.Streams.Attach(r.Context(), t.Namespace, t.Pod, t.UID, t.Container, opts)
	})
}

// remoteCommand serves an exec or attach as the kubelet does: it asks the
// runtime for its URL and proxies the upgraded connection there (SPDY).
// A WebSocket request of the v5 protocol is translated to SPDY towards the
// runtime, whose streaming server speaks older protocols only; the
// translator sends the exit code back in v5's status.
func (p *Proxy) remoteCommand(w http.ResponseWriter, r *http.Request, find func(Options) (*url.URL, error)) {
	o, err := remotecommand.NewOptions(r)
	if err != nil {
		p.Refuse(w, r, fmt.Errorf("%w: %w", ErrBadRequest, err))
		return
	}
	opts := Options{Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, TTY: o.TTY}
	loc, err := find(opts)
	if err != nil {
		p.Refuse(w, r, err)
		return
	}
	var h http.Handler = proxy.NewUpgradeAwareHandler(loc, nil, false, true, &responder{p.logger()})
	if wsstream.IsWebSocketRequestWithStreamCloseProtocol(r) {
		h = translator.NewStreamTranslatorHandler(loc, nil, 0, translator.Options{
			Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, Tty: opts.TTY})
	}
	h.ServeHTTP(w, r)
}

// PortForward serves a port-forward to the target pod as the kubelet
// does: SPDY proxied to the runtime's URL, or SPDY tunnelled in a
// WebSocket (the protocol kubectl uses first), unwrapped here.
func (p *Proxy) PortForward(w http.ResponseWriter, r *http.Request, t Target) {
	tunnel := wsstream.IsWebSocketRequestWithTunnelingProtocol(r)
	var ports []int32
	if !tunnel {
		o, err := portforward.NewV4Options(r)
		if err != nil {
			p.Refuse(w, r, fmt.Errorf("%w: %w", ErrBadRequest, err))
			return
		}
		ports = o.Ports
	}
	loc, err := p.Streams.PortForward(r.Context(), t.Namespace, t.Pod, t.UID, ports)
	if err != nil {
		p.Refuse(w, r, err)
		return
	}
	var h http.Handler = proxy.NewUpgradeAwareHandler(loc, nil, false, true, &responder{p.logger()})
	if tunnel {
		h = translator.NewTunnelingHandler(h)
	}
	h.ServeHTTP(w, r)
}

func (p *Proxy) logger() hclog.Logger {
	if p.Logger == nil {
		return hclog.NewNullLogger()
	}
	return p.Logger
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
