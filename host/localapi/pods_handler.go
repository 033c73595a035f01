package localapi

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

func (h *handler) applyPod(w http.ResponseWriter, r *http.Request) {
	if !accept(w, r, h.v.Pods != nil, "/v1/pods") {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodySize))
	if err != nil {
		writeError(w, fmt.Errorf("reading request body: %w", err))
		return
	}
	res, err := h.v.Pods.Apply(r.Context(), "request POST /v1/pods", body)
	if err != nil {
		writeError(w, err)
		return
	}
	code := http.StatusOK
	if res.Op == "created" {
		code = http.StatusCreated
	}
	writeJSON(w, code, ApplyResponse{Op: res.Op, PodDetail: detail(res.Item)})
}

func detail(it PodItem) PodDetail { return PodDetail{Summary: Summarize(it), Pod: it.Pod} }

func (h *handler) listPods(w http.ResponseWriter, r *http.Request) {
	if !accept(w, r, h.v.Pods != nil, "/v1/pods", "watch") {
		return
	}
	watch, err := boolParam(r, "watch")
	if err != nil {
		writeError(w, err)
		return
	}
	if watch {
		h.watchPods(w, r)
		return
	}
	items, err := h.v.Pods.List(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]PodSummary, len(items))
	for i, it := range items {
		out[i] = Summarize(it)
	}
	writeJSON(w, http.StatusOK, out)
}

// watchPods streams the current pods as ADDED, then every change, one JSON
// object a line. It subscribes before listing so no change falls between.
func (h *handler) watchPods(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	changes, err := h.v.Pods.Watch(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	items, err := h.v.Pods.List(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	initial := make([]PodEvent, len(items))
	for i, it := range items {
		initial[i] = PodEvent{Type: Added, Summary: Summarize(it), Pod: it.Pod}
	}
	streamWatch(ctx, w, initial, changes, func(c PodChange) (PodEvent, bool) {
		return PodEvent{Type: c.Type, Summary: Summarize(c.Item), Pod: c.Item.Pod}, true
	})
}

func (h *handler) getPod(w http.ResponseWriter, r *http.Request) {
	if !accept(w, r, h.v.Pods != nil, "/v1/pods") {
		return
	}
	it, err := h.v.Pods.Get(r.Context(), r.PathValue("ns"), r.PathValue("name"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, detail(it))
}

func (h *handler) deletePod(w http.ResponseWriter, r *http.Request) {
	if !accept(w, r, h.v.Pods != nil, "/v1/pods", "gracePeriod", "force") {
		return
	}
	grace, err := intParam(r, "gracePeriod")
	if err != nil {
		writeError(w, err)
		return
	}
	force, err := boolParam(r, "force")
	if err != nil {
		writeError(w, err)
		return
	}
	it, err := h.v.Pods.Delete(r.Context(), r.PathValue("ns"), r.PathValue("name"), DeleteOptions{GracePeriod: grace, Force: force})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, detail(it))
}

func (h *handler) logs(w http.ResponseWriter, r *http.Request) {
	if !accept(w, r, h.v.Pods != nil, "/v1/pods", logParams...) {
		return
	}
	opts, err := logOptions(r, time.Now())
	if err != nil {
		writeError(w, err)
		return
	}
	fw := &flushWriter{w: w}
	err = h.v.Pods.Logs(r.Context(), r.PathValue("ns"), r.PathValue("name"), opts, fw)
	if err != nil && !fw.wrote {
		writeError(w, err)
	}
}

// flushWriter sends every write at once, for streamed logs; the first write
// commits the 200 answer.
type flushWriter struct {
	w     http.ResponseWriter
	wrote bool
}

func (f *flushWriter) Write(p []byte) (int, error) {
	if !f.wrote {
		f.wrote = true
		f.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		f.w.Header().Set("X-Content-Type-Options", "nosniff")
	}
	n, err := f.w.Write(p)
	if err == nil {
		err = http.NewResponseController(f.w).Flush()
	}
	return n, err
}
