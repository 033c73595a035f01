package volumeplugins

import (
	"errors"
	"fmt"

	"github.com/podhost/podhost/host/supervisor"
	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/pluginapi/volumeerr"
)

// classifiedError is a volume plugin call's error with the class the
// contract's rule gives it, decided once at the gRPC edge.
type classifiedError struct {
	class volumemanager.Class
	err   error
}

func (e *classifiedError) Error() string { return e.err.Error() }
func (e *classifiedError) Unwrap() error { return e.err }

// edgeError classifies the error of a plugin call: a call the supervisor
// did not send is transient, then the contract's rule (volumeerr).
func edgeError(plugin, call string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, supervisor.ErrNotSent) {
		err = fmt.Errorf("%w: %w", volumeerr.ErrNotSent, err)
	}
	class := map[volumeerr.Class]volumemanager.Class{
		volumeerr.Final: volumemanager.Final, volumeerr.Uncertain: volumemanager.UncertainError, volumeerr.Transient: volumemanager.Transient,
	}[volumeerr.Classify(err)]
	return &classifiedError{class: class, err: fmt.Errorf("plugin %s: %s: %w", plugin, call, err)}
}

// transientError is a plugin's error on a query made before the
// operation's call: nothing was attempted, so no state changes.
func transientError(plugin, call string, err error) error {
	return &classifiedError{class: volumemanager.Transient, err: fmt.Errorf("plugin %s: %s: %w", plugin, call, err)}
}

// Classify is the volume manager's Classifier: a plugin call's error has
// its class from the edge; the host's own volumes and a volume no plugin
// serves fail finally (nothing was done).
func Classify(err error) volumemanager.Class {
	var ce *classifiedError
	if errors.As(err, &ce) {
		return ce.class
	}
	return volumemanager.Final
}
