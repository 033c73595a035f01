package localapi

import (
	"context"
	"encoding/json"
	"net/http"
)

// stream writes newline-delimited JSON, flushing each line.
type stream struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	enc *json.Encoder
}

// startStream commits a 200 answer of JSON lines.
func startStream(w http.ResponseWriter) *stream {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	return &stream{w: w, rc: rc, enc: json.NewEncoder(w)}
}

func (s *stream) send(v any) error {
	if err := s.enc.Encode(v); err != nil {
		return err
	}
	return s.rc.Flush()
}

// streamWatch answers a watch: it streams initial, then each change for
// which line reports true, as line makes it, until ctx ends, changes is
// closed or a write fails.
func streamWatch[T, C any](ctx context.Context, w http.ResponseWriter, initial []T, changes <-chan C, line func(C) (T, bool)) {
	s := startStream(w)
	for _, v := range initial {
		if s.send(v) != nil {
			return
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case c, ok := <-changes:
			if !ok {
				return
			}
			if v, send := line(c); send && s.send(v) != nil {
				return
			}
		}
	}
}
