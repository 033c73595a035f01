package localapi

import (
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
