package localapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/streamproxy"
)

// execParams are the query of exec: the kubelet's (command repeated,
// input, output, error and tty as "1") and the container, which defaults
// to the pod's default container.
var execParams = []string{"container", "command", "input", "output", "error", "tty"}

// DefaultContainerAnnotation names the container exec, attach and logs
// use when none is given, as kubectl's.
const DefaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

func (h *handler) routeStreams(mux *http.ServeMux) {
	h.proxy = &streamproxy.Proxy{Streams: h.v.Streams, Refuse: func(w http.ResponseWriter, _ *http.Request, err error) {
		if errors.Is(err, streamproxy.ErrBadRequest) {
			err = fmt.Errorf("%w: %w", errBadRequest, err)
		}
		writeError(w, err)
	}}
	both := func(f http.HandlerFunc) methods { return methods{http.MethodGet: f, http.MethodPost: f} }
	route(mux, "/v1/pods/{ns}/{name}/exec", both(h.exec))
	route(mux, "/v1/pods/{ns}/{name}/attach", both(h.attach))
	route(mux, "/v1/pods/{ns}/{name}/portforward", both(h.portForward))
	route(mux, "/v1/stats/summary", methods{http.MethodGet: h.statsSummary})
}

func (h *handler) exec(w http.ResponseWriter, r *http.Request) {
	if !accept(w, r, h.v.Streams != nil, "exec", execParams...) {
		return
	}
	t, err := h.target(r.Context(), r)
	if err != nil {
		writeError(w, err)
		return
	}
	h.proxy.Exec(w, r, t)
}

func (h *handler) attach(w http.ResponseWriter, r *http.Request) {
	if !accept(w, r, h.v.Streams != nil, "attach", "container", "input", "output", "error", "tty") {
		return
	}
	t, err := h.target(r.Context(), r)
	if err != nil {
		writeError(w, err)
		return
	}
	h.proxy.Attach(w, r, t)
}

// portForward takes its ports from the SPDY streams' headers, or from
// "port" for a WebSocket of the v4 protocol.
func (h *handler) portForward(w http.ResponseWriter, r *http.Request) {
	if !accept(w, r, h.v.Streams != nil, "portforward", "port") {
		return
	}
	h.proxy.PortForward(w, r, streamproxy.Target{Namespace: r.PathValue("ns"), Pod: r.PathValue("name")})
}

// target is the pod of the path and the query's container, or the pod's
// default container.
func (h *handler) target(ctx context.Context, r *http.Request) (streamproxy.Target, error) {
	t := streamproxy.Target{Namespace: r.PathValue("ns"), Pod: r.PathValue("name"), Container: r.URL.Query().Get("container")}
	if t.Container != "" || h.v.Pods == nil {
		return t, nil
	}
	it, err := h.v.Pods.Get(ctx, t.Namespace, t.Pod)
	if err != nil {
		return t, err
	}
	t.Container = DefaultContainer(it.Pod)
	return t, nil
}

// DefaultContainer is the container a pod's annotation names, else its
// first container.
func DefaultContainer(pod *v1.Pod) string {
	if pod == nil {
		return ""
	}
	if c := pod.Annotations[DefaultContainerAnnotation]; c != "" {
		return c
	}
	if len(pod.Spec.Containers) > 0 {
		return pod.Spec.Containers[0].Name
	}
	return ""
}

// statsSummary answers the node's last reading of its numbers, the
// kubelet's Summary API; 503 before the first reading or when the
// runtime's part of it could not be read.
func (h *handler) statsSummary(w http.ResponseWriter, r *http.Request) {
	if !accept(w, r, h.v.Stats != nil, "/v1/stats/summary") {
		return
	}
	s, err := h.v.Stats()
	if err != nil {
		writeError(w, fmt.Errorf("%w: %w", ErrUnavailable, err))
		return
	}
	writeJSON(w, http.StatusOK, s)
}
