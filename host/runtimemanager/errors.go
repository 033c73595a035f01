package runtimemanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/host/supervisor"
)

// Sentinel errors. Errors from the plugin are translated once, in
// callError: NOT_FOUND becomes ErrNotFound, INVALID_ARGUMENT and
// FAILED_PRECONDITION become ErrRejected, the uncertain codes
// (UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, UNKNOWN) become ErrUncertain.
// supervisor.ErrPluginExited (and the supervisor's other sentinels) and context
// errors pass through unchanged, so errors.Is works on all of them.
var (
	// ErrNotFound: the plugin does not know the sandbox, container or image.
	ErrNotFound = errors.New("not found")
	// ErrRejected: the plugin refused the call for good (malformed request,
	// or the object's state forbids it).
	ErrRejected = errors.New("rejected by the runtime")
	// ErrUncertain: the call may or may not have taken effect. The Manager
	// never repeats it blindly: the next sync lists the runtime first.
	ErrUncertain = errors.New("runtime call outcome uncertain")
	// ErrCrashLoopBackOff: a container should restart but is in back-off.
	// The error is a *BackOffError.
	ErrCrashLoopBackOff = errors.New("container in crash loop back-off")
	// ErrImagePull: an image could not be made present.
	ErrImagePull = errors.New("image pull failed")
	// ErrContainerConfig: the container's config could not be generated
	// (an unsupported env source, for example).
	ErrContainerConfig = errors.New("container config error")
	// ErrPodRunning: RemovePod was asked to remove a pod that still runs.
	ErrPodRunning = errors.New("pod still has running containers or a ready sandbox")
)

// BackOffError says that a container is waiting out its crash back-off.
// It matches ErrCrashLoopBackOff with errors.Is. RetryAfter tells the
// caller when a sync can restart it.
type BackOffError struct {
	Container string
	Delay     time.Duration
	Until     time.Time
	now       time.Time
}

func (e *BackOffError) Error() string {
	return fmt.Sprintf("back-off %s restarting failed container %q", e.Delay, e.Container)
}

// Is makes errors.Is(err, ErrCrashLoopBackOff) true.
func (e *BackOffError) Is(target error) bool { return target == ErrCrashLoopBackOff }

// RetryAfter is the time left until the back-off ends.
func (e *BackOffError) RetryAfter() time.Duration { return max(e.Until.Sub(e.now), 0) }

// callError translates an error of a plugin call named op. Errors that
// carry no gRPC status (the supervisor's sentinels, context errors) are
// only wrapped.
func callError(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, supervisor.ErrPluginExited) || errors.Is(err, supervisor.ErrPluginNotReady) ||
		errors.Is(err, supervisor.ErrPluginRefused) || errors.Is(err, supervisor.ErrUnknownPlugin) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("%s: %w: %w", op, ErrUncertain, err)
	}
	var sentinel error
	switch st.Code() {
	case codes.NotFound:
		sentinel = ErrNotFound
	case codes.InvalidArgument, codes.FailedPrecondition:
		sentinel = ErrRejected
	case codes.Canceled:
		sentinel = context.Canceled
	default:
		sentinel = ErrUncertain
	}
	return fmt.Errorf("%s: %w: %s", op, sentinel, st.Message())
}
