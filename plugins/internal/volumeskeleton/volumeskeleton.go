// Package volumeskeleton holds the config plumbing the volume plugins
// (volume-csi, volume-fc and volume-iscsi) share. Each plugin keeps its own
// server, config and parser; a plugin whose Configure comes to do more than
// store its config writes its own. Only those three plugins import it.
package volumeskeleton

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/podhost/podhost/sdk"
)

// Configure returns an sdk.Plugin Configure that decodes and validates a
// config with parse. A config without errors replaces the one in cfg; one
// with errors is refused, its errors returned, and cfg left as it was.
func Configure[T any](cfg *atomic.Pointer[T], parse func([]byte) (T, []sdk.FieldError)) func(context.Context, json.RawMessage) []sdk.FieldError {
	return func(_ context.Context, raw json.RawMessage) []sdk.FieldError {
		c, errs := parse(raw)
		if len(errs) > 0 {
			return errs
		}
		cfg.Store(&c)
		return nil
	}
}
