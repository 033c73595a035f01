package lifecycletest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// LogRecorder is a slog.Handler that keeps every record as
// "LEVEL message key=value ...", for tests that assert on logs.
type LogRecorder struct {
	mu    sync.Mutex
	lines []string
}

// Logger returns a logger that writes to the recorder.
func (r *LogRecorder) Logger() *slog.Logger { return slog.New(r) }

// Enabled accepts every level.
func (r *LogRecorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle records one line.
func (r *LogRecorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Level.String() + " " + rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, b.String())
	return nil
}

// WithAttrs is not needed by the lifecycle package; attributes are dropped.
func (r *LogRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }

// WithGroup is not needed by the lifecycle package; groups are dropped.
func (r *LogRecorder) WithGroup(string) slog.Handler { return r }

// Lines returns the recorded lines.
func (r *LogRecorder) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// Contains reports whether some line contains s.
func (r *LogRecorder) Contains(s string) bool {
	for _, l := range r.Lines() {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
