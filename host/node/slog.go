package node

import (
	"context"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// slogHandler lets the lifecycle core, which logs through log/slog, write
// into the host's hclog logger with the same keys.
type slogHandler struct {
	log    hclog.Logger
	prefix string
}

// newSlog returns a *slog.Logger writing to l.
func newSlog(l hclog.Logger) *slog.Logger { return slog.New(&slogHandler{log: l}) }

func (h *slogHandler) Enabled(_ context.Context, level slog.Level) bool {
	return h.log.GetLevel() <= hclogLevel(level)
}

func (h *slogHandler) Handle(_ context.Context, r slog.Record) error {
	args := make([]any, 0, 2*r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		args = append(args, h.prefix+a.Key, a.Value.Resolve().Any())
		return true
	})
	h.log.Log(hclogLevel(r.Level), r.Message, args...)
	return nil
}

func (h *slogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	args := make([]any, 0, 2*len(attrs))
	for _, a := range attrs {
		args = append(args, h.prefix+a.Key, a.Value.Resolve().Any())
	}
	return &slogHandler{log: h.log.With(args...), prefix: h.prefix}
}

func (h *slogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &slogHandler{log: h.log, prefix: h.prefix + name + "."}
}

func hclogLevel(l slog.Level) hclog.Level {
	switch {
	case l < slog.LevelDebug:
		return hclog.Trace
	case l < slog.LevelInfo:
		return hclog.Debug
	case l < slog.LevelWarn:
		return hclog.Info
	case l < slog.LevelError:
		return hclog.Warn
	default:
		return hclog.Error
	}
}
