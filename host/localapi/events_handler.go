package localapi

import (
	"net/http"
	"strings"
)

func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	if !accept(w, r, h.v.Events != nil, "/v1/events", "watch", "for", "kind") {
		return
	}
	watch, err := boolParam(r, "watch")
	if err != nil {
		writeError(w, err)
		return
	}
	f := EventFilter{Kind: r.URL.Query().Get("kind")}
	if v := r.URL.Query().Get("for"); v != "" {
		// namespace/name names a pod; a bare name a plugin or the node.
		ns, name, namespaced := strings.Cut(v, "/")
		if !namespaced {
			ns, name = "", v
		}
		if (namespaced && ns == "") || name == "" || strings.Contains(name, "/") {
			writeError(w, badParam("for", v, "is not namespace/name or a plugin or node name"))
			return
		}
		f.Namespace, f.Name = ns, name
		if f.Kind == "" && namespaced {
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
	streamWatch(ctx, w, list, changes, func(e Event) (Event, bool) { return e, f.Match(e) })
}
