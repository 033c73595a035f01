package apisource

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrNotFound is returned for a pod the api source does not hold.
	ErrNotFound = errors.New("pod not found in the api source")
	// ErrInvalid is matched by every [*InvalidError].
	ErrInvalid = errors.New("invalid pod")
	// ErrTerminating refuses to apply a pod that is being deleted.
	ErrTerminating = errors.New("pod is being deleted")
	// ErrNotLoaded is returned before Load has succeeded.
	ErrNotLoaded = errors.New("api source not loaded yet")
	// ErrUIDMismatch refuses to remove a pod stored under another UID.
	ErrUIDMismatch = errors.New("pod has another uid")
)

// InvalidError rejects a request that did not decode or validate. Its
// Unwrap gives one error per problem: a *field.Error naming the field where
// the problem has one.
type InvalidError struct {
	// Where names the request, such as "request POST /v1/pods".
	Where string
	// Namespace and Name identify the pod when the body decoded far enough.
	Namespace, Name string
	// Kind is "ConfigMap" or "Secret" for such a request; empty for a pod.
	Kind string
	Errs []error
}

func (e *InvalidError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	who := ""
	if e.Name != "" {
		kind := "pod"
		if e.Kind != "" {
			kind = e.Kind
		}
		who = fmt.Sprintf(" %s %s/%s:", kind, e.Namespace, e.Name)
	}
	return fmt.Sprintf("%s:%s %v: %s", e.Where, who, ErrInvalid, strings.Join(msgs, "; "))
}

// Unwrap returns the individual problems.
func (e *InvalidError) Unwrap() []error { return e.Errs }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }
