package localapi

import (
	"io"
	"net/http"
	"time"
)

// ParseLogOptions reads the log options of a request's query (follow,
// tailLines, previous, timestamps, sinceSeconds, sinceTime, container), the
// names the kubelet's /containerLogs uses too; sinceSeconds becomes
// SinceTime by now. A bad value is an error wrapping ErrBadRequest that
// names the parameter. Unknown parameters are not checked here.
func ParseLogOptions(r *http.Request, now time.Time) (LogOptions, error) {
	return logOptions(r, now)
}

// NewFlushWriter returns a writer that sends every write to w at once, for
// streamed logs; Wrote reports whether the first write (which commits a
// 200 answer) has happened.
func NewFlushWriter(w http.ResponseWriter) interface {
	io.Writer
	Wrote() bool
} {
	return &flushWriter{w: w}
}

// Wrote reports whether anything was written.
func (f *flushWriter) Wrote() bool { return f.wrote }
