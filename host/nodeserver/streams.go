package nodeserver

import (
	"errors"
	"net/http"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/streamproxy"
)

// handleStreams registers the kubelet's streaming endpoints, with and
// without the pod's UID in the path, for GET and POST as the kubelet; the
// streams themselves are host/streamproxy's.
func (s *Server) handleStreams(mux *http.ServeMux) {
	p := &streamproxy.Proxy{Streams: s.opts.Streams, Refuse: s.streamError, Logger: s.opts.Logger}
	target := func(r *http.Request) streamproxy.Target {
		return streamproxy.Target{Namespace: r.PathValue("ns"), Pod: r.PathValue("pod"),
			UID: types.UID(r.PathValue("uid")), Container: r.PathValue("container")}
	}
	for _, path := range []string{"/exec/{ns}/{pod}/{container}", "/exec/{ns}/{pod}/{uid}/{container}"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { p.Exec(w, r, target(r)) })
	}
	for _, path := range []string{"/attach/{ns}/{pod}/{container}", "/attach/{ns}/{pod}/{uid}/{container}"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { p.Attach(w, r, target(r)) })
	}
	for _, path := range []string{"/portForward/{ns}/{pod}", "/portForward/{ns}/{pod}/{uid}"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { p.PortForward(w, r, target(r)) })
	}
}

func (s *Server) streamError(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, localapi.ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, streamproxy.ErrBadRequest):
		code = http.StatusBadRequest
	}
	s.opts.Logger.Debug("refused a stream", "path", r.URL.Path, "err", err)
	http.Error(w, err.Error(), code)
}
