package localapi

import (
	"net/http"
	"net/http/pprof"
)

// routePprof serves Go's runtime profiles under /debug/pprof/, as the
// kubelet does: the index, cmdline, profile (CPU, ?seconds=N), symbol,
// trace and every named profile (goroutine, heap, allocs, block, mutex,
// threadcreate) through the index's handler. They come with the API's own
// access control and nothing less: the unix socket (0600) and, on TCP, the
// bearer token, which already allows far more (running any pod) than
// reading a profile does.
func routePprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
