package localapi

import (
	"net/http"
	"strings"
)

func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	if h.v.Events == nil {
		notImplemented(w, "/v1/events")
		return
	}
	if err := checkParams(r, "watch", "for", "kind"); err != nil {
		writeError(w, err)
		return
	}
	watch, err := boolParam(r, "watch")
	if err != nil {
		writeError(w, err)
		return
	}
	f := EventFilter{Kind: r.URL.Query().Get("kind")}
	if v := r.URL.Query().Get("for"); v != "" {
		ns, name, ok := strings.Cut(v, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			writeError(w, badParam("for", v, "is not namespace/name"))
			return
		}
		f.Namespace, f.Name = ns, name
		if f.Kind == "" {
			f.Kind = "Pod"
		}
	}
	ctx := r.Context()
	var changes <-chan Event
	if watch {
		if changes, err = h.v.Events.Watch(ctx, f); err != nil {
			writeError(w, err)
			return
		}
	}
	list, err := h.v.Events.List(ctx, f)
	if err != nil {
		writeError(w, err)
		return
	}
	if !watch {
		if list == nil {
			list = []Event{}
		}
		writeJSON(w, http.StatusOK, list)
		return
	}
	s := startStream(w)
	for _, e := range list {
		if s.send(e) != nil {
			return
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-changes:
			if !ok {
				return
			}
			if f.Match(e) && s.send(e) != nil {
				return
			}
		}
	}
}
