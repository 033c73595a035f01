package supervisor

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the Manager returns for a plugin names the
// plugin and wraps one of these, so callers test with errors.Is.
var (
	// ErrPluginExited: the plugin's process exited (or was stopped) while a
	// call was in flight, or the plugin is down and waiting to be restarted.
	// The caller may retry after the plugin restarts (see Subscribe).
	ErrPluginExited = errors.New("plugin exited")

	// ErrPluginNotReady: the plugin is being launched and has not passed its
	// start checks yet.
	ErrPluginNotReady = errors.New("plugin not ready")

	// ErrPluginRefused: the plugin was launched but failed a start check
	// (checksum, protocol or contract version, kind, config). It is retried
	// with back-off; the error says why it was refused.
	ErrPluginRefused = errors.New("plugin refused")

	// ErrUnknownPlugin: no plugin of that name (and kind) was configured.
	ErrUnknownPlugin = errors.New("unknown plugin")

	// ErrManagerStopped: the Manager was stopped or has not been started.
	ErrManagerStopped = errors.New("plugin manager is not running")

	// ErrNotSent is wrapped, next to one of the sentinels above, by every
	// error of a call that never reached a plugin process: no instance was
	// running (down, starting, refused, stopped) or the instance had
	// already died when the call was made. Such a call had no effect, so a
	// caller may treat it as transient; a call cut short in flight does not
	// wrap it (its outcome is unknown).
	ErrNotSent = errors.New("call not sent")
)

// RefusedError says why a plugin was refused at launch. It matches
// ErrPluginRefused with errors.Is.
type RefusedError struct {
	// Plugin is the name from the PluginSpec.
	Plugin string
	// Reason completes the sentence `plugin "name" ...`, for example
	// "speaks contract versions [v0], host needs v1".
	Reason string
	// Err is the underlying error, if any.
	Err error
}

func (e *RefusedError) Error() string { return fmt.Sprintf("plugin %q %s", e.Plugin, e.Reason) }

// Unwrap returns the underlying error.
func (e *RefusedError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrPluginRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrPluginRefused }

func refused(plugin string, err error, format string, args ...any) error {
	return &RefusedError{Plugin: plugin, Reason: fmt.Sprintf(format, args...), Err: err}
}

var _ error = (*RefusedError)(nil)
