package localapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/podhost/podhost/host/streamproxy"
)

// MaxBodySize bounds a request body; a larger one is refused with 413.
const MaxBodySize = 1 << 20

// Handler returns the API's HTTP handler.
func Handler(v Views) http.Handler {
	mux := http.NewServeMux()
	h := &handler{v: v}
	route(mux, "/v1/plugins", methods{http.MethodGet: h.plugins})
	route(mux, "/v1/pods", methods{http.MethodGet: h.listPods, http.MethodPost: h.applyPod})
	route(mux, "/v1/pods/{ns}/{name}", methods{http.MethodGet: h.getPod, http.MethodDelete: h.deletePod})
	route(mux, "/v1/pods/{ns}/{name}/logs", methods{http.MethodGet: h.logs})
	h.routeStreams(mux)
	route(mux, "/v1/events", methods{http.MethodGet: h.events})
	for _, o := range []struct {
		kind, path string
		list       func() []ObjectInfo
	}{{"ConfigMap", "/v1/configmaps", v.ConfigMaps}, {"Secret", "/v1/secrets", v.Secrets}} {
		route(mux, o.path, methods{http.MethodGet: h.objects(o.path, o.list), http.MethodPost: h.applyObject(o.kind, o.path)})
		route(mux, o.path+"/{ns}/{name}", methods{http.MethodDelete: h.deleteObject(o.kind, o.path)})
	}
	route(mux, "/v1/node", methods{http.MethodGet: h.node})
	route(mux, "/v1/node/shutdown", methods{http.MethodPost: h.shutdown})
	route(mux, "/healthz", methods{http.MethodGet: h.healthz})
	route(mux, "/readyz", methods{http.MethodGet: h.readyz})
	route(mux, "/metrics", methods{http.MethodGet: h.metrics})
	routePprof(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, ErrorBody{Error: "no such endpoint: " + r.URL.Path})
	})
	return mux
}

type handler struct {
	v     Views
	proxy *streamproxy.Proxy
}

// methods maps a method to its handler; HEAD is not served.
type methods map[string]http.HandlerFunc

// route serves path with a JSON 405 for other methods.
func route(mux *http.ServeMux, path string, m methods) {
	allowed := make([]string, 0, len(m))
	for meth := range m {
		allowed = append(allowed, meth)
	}
	sort.Strings(allowed)
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		f, ok := m[r.Method]
		if !ok {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeJSON(w, http.StatusMethodNotAllowed, ErrorBody{
				Error: fmt.Sprintf("method %s not allowed on %s; allowed: %s", r.Method, path, strings.Join(allowed, ", "))})
			return
		}
		f(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	code, body := errorStatus(err)
	writeJSON(w, code, body)
}

func notImplemented(w http.ResponseWriter, what string) {
	writeJSON(w, http.StatusNotImplemented, ErrorBody{Error: what + " is not served by this host"})
}

// accept answers 501 for what unless served, and 400 when r has a query
// parameter other than allowed. It reports whether the handler goes on.
func accept(w http.ResponseWriter, r *http.Request, served bool, what string, allowed ...string) bool {
	if !served {
		notImplemented(w, what)
		return false
	}
	if err := checkParams(r, allowed...); err != nil {
		writeError(w, err)
		return false
	}
	return true
}

func (h *handler) plugins(w http.ResponseWriter, r *http.Request) {
	if err := checkParams(r); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, h.v.Plugins())
}

// objects lists the ConfigMaps or Secrets list gives.
func (h *handler) objects(path string, list func() []ObjectInfo) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !accept(w, r, list != nil, path) {
			return
		}
		out := list()
		if out == nil {
			out = []ObjectInfo{}
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// applyObject creates or replaces one ConfigMap or Secret: 201 created,
// 200 updated or unchanged.
func (h *handler) applyObject(kind, path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !accept(w, r, h.v.Objects != nil, path) {
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodySize))
		if err != nil {
			writeError(w, fmt.Errorf("reading request body: %w", err))
			return
		}
		info, op, err := h.v.Objects.Apply(r.Context(), kind, "request POST "+path, body)
		if err != nil {
			writeError(w, err)
			return
		}
		code := http.StatusOK
		if op == "created" {
			code = http.StatusCreated
		}
		writeJSON(w, code, ObjectApplyResponse{Op: op, ObjectInfo: info})
	}
}

// deleteObject removes one ConfigMap or Secret: 200, or 404.
func (h *handler) deleteObject(kind, path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !accept(w, r, h.v.Objects != nil, path) {
			return
		}
		ns, name := r.PathValue("ns"), r.PathValue("name")
		if err := h.v.Objects.Delete(r.Context(), kind, ns, name); err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, ObjectInfo{Namespace: ns, Name: name})
	}
}

func (h *handler) healthz(w http.ResponseWriter, _ *http.Request) {
	fmt.Fprintln(w, "ok")
}

func (h *handler) readyz(w http.ResponseWriter, _ *http.Request) {
	ready, why := h.v.Ready()
	if !ready {
		http.Error(w, "not ready: "+why, http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}

func (h *handler) metrics(w http.ResponseWriter, r *http.Request) {
	if h.v.Metrics == nil {
		notImplemented(w, "/metrics")
		return
	}
	promhttp.HandlerFor(h.v.Metrics, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
}

func (h *handler) node(w http.ResponseWriter, r *http.Request) {
	if err := checkParams(r); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, h.nodeInfo(r.Context()))
}

func (h *handler) nodeInfo(ctx context.Context) NodeInfo {
	var info NodeInfo
	if h.v.Node != nil {
		info = h.v.Node(ctx)
	}
	if info.Hostname == "" {
		info.Hostname, _ = os.Hostname()
	}
	info.OS, info.Arch, info.GoVersion = runtime.GOOS, runtime.GOARCH, runtime.Version()
	info.Ready, info.NotReady = h.v.Ready()
	info.Plugins = PluginsSummary{}
	for _, p := range h.v.Plugins() {
		info.Plugins.Total++
		if p.Ready {
			info.Plugins.Ready++
		} else {
			info.Plugins.NotReady = append(info.Plugins.NotReady, p.Name)
		}
	}
	if h.v.Pods != nil {
		if pods, err := h.v.Pods.List(ctx); err == nil {
			info.Pods = len(pods)
		}
	}
	return info
}
