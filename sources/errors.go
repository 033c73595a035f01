package sources

import (
	"errors"
	"fmt"
)

// ObjectError is a source's error about one object it could not take (a
// manifest document that did not decode or validate), naming the object
// as far as it is known: kind "Pod", "PersistentVolume",
// "PersistentVolumeClaim", "ConfigMap" or "Secret", or empty.
type ObjectError interface {
	error
	Object() (kind, namespace, name string)
}

// ErrConflict is matched by every [*ConflictError].
var ErrConflict = errors.New("name claimed by another source")

// ConflictError rejects an object whose kind and namespace/name an earlier
// claimant already holds.
type ConflictError struct {
	// Kind is "Pod", "PersistentVolume", "PersistentVolumeClaim",
	// "ConfigMap" or "Secret".
	Kind string
	// Name is namespace/name, or name for a PersistentVolume.
	Name string
	// Loser and Winner are the rejected object's origin and the holder's.
	Loser, Winner Origin
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s: %s %s: %v: held by source %q (%s)",
		e.Loser.Where, e.Kind, e.Name, ErrConflict, e.Winner.Source, e.Winner.Where)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }
