package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sentinel errors of the lifecycle core. Callers compare with errors.Is;
// messages are wrapped with %w and lower-case context.
var (
	// ErrNotFound means the runtime, cache or sink does not know the pod.
	ErrNotFound = errors.New("not found")
	// ErrUIDMismatch means a sink holds a different pod under the same name.
	ErrUIDMismatch = errors.New("pod uid mismatch")
	// ErrNetworkNotReady means the pod network is not ready; it is retried
	// after one second instead of the normal back-off.
	ErrNetworkNotReady = errors.New("network is not ready")
	// ErrContainersStillRunning means a kill returned but a container runs.
	ErrContainersStillRunning = errors.New("detected running containers after a successful kill")
	// ErrGracePeriodExceeded means a kill did not finish in time.
	ErrGracePeriodExceeded = errors.New("pod termination exceeded its grace period")
	// ErrTerminationRequested means a container start was refused because
	// the pod is terminating. It wraps context.Canceled: the sync was
	// cut short by the termination, it did not fail, and it gets no error
	// back-off.
	ErrTerminationRequested = fmt.Errorf("pod termination was requested: %w", context.Canceled)
)

// RetryAfterError is an error of a sync that knows when it is worth trying
// again, such as a container in CrashLoopBackOff: the worker re-syncs the pod
// after RetryAfter instead of the error back-off period.
type RetryAfterError interface {
	error
	RetryAfter() time.Duration
}
