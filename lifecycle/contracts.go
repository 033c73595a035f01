package lifecycle

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Clock is the only source of time of the lifecycle core.
//
// Now must be monotonic enough for ordering (never go backwards). After
// returns a channel that receives once d has elapsed on this clock; drivers
// use it for tick loops, the core never does.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// PodSyncer performs the three phases of a pod's life. The pod worker calls
// it; it must be safe to call concurrently for different pods and is never
// called concurrently for the same pod.
type PodSyncer interface {
	// SyncPod converges the pod toward its spec. It is reentrant and may be
	// called many times. It returns isTerminal=true when the pod reached a
	// terminal phase by itself. It must return promptly with an error
	// wrapping context.Canceled when ctx is cancelled, and it must check ctx
	// immediately before each container start and not start the container
	// once ctx is done: that is how termination stops pending starts.
	SyncPod(ctx context.Context, updateType UpdateType, pod, mirror *v1.Pod, status *PodStatus) (isTerminal bool, err error)
	// SyncTerminatingPod stops every container within gracePeriod seconds
	// (nil means the spec default) and reports the status mutated by
	// statusFn (which may be nil). It is retried until it returns nil, and it
	// must not return nil while any container runs. ctx is cancelled when the
	// grace period shrinks; the call should then return so that it is retried
	// with the shorter grace period.
	SyncTerminatingPod(ctx context.Context, pod *v1.Pod, status *PodStatus, gracePeriod *int64, statusFn func(*v1.PodStatus)) error
	// SyncTerminatingRuntimePod kills a pod that has no config with a grace
	// period of one second. It writes no status and must not return nil
	// unless every container is known to be stopped.
	SyncTerminatingRuntimePod(ctx context.Context, pod *RunningPod) error
	// SyncTerminatedPod releases what must be freed in the foreground
	// (volumes, cgroups) and writes the final status. Once it returns nil the
	// pod is finished on the node. It must be reentrant.
	SyncTerminatedPod(ctx context.Context, pod *v1.Pod, status *PodStatus) error
}

// Runtime is the container runtime as the lifecycle core sees it. The host
// implements it on top of the runtime plugin. All methods are safe for
// concurrent use.
type Runtime interface {
	// ListPods returns every pod the runtime holds, with its containers.
	ListPods(ctx context.Context) ([]*RunningPod, error)
	// PodStatus returns the detailed status of one pod. A pod the runtime
	// does not hold gives an empty status and no error.
	PodStatus(ctx context.Context, uid types.UID, name, namespace string) (*PodStatus, error)
	// SyncPod creates the sandbox and starts or restarts the containers the
	// spec and restart policy ask for. It must check ctx before each
	// container start and start nothing once ctx is done.
	SyncPod(ctx context.Context, pod *v1.Pod, status *PodStatus) error
	// KillPod stops every container and the sandbox of the pod, giving each
	// container gracePeriod seconds. It is idempotent. A nil pod spec is
	// allowed for pods known only to the runtime.
	KillPod(ctx context.Context, pod *v1.Pod, running *RunningPod, gracePeriod int64) error
}

// Volumes mounts and unmounts a pod's volumes. Both calls are idempotent and
// safe without a prior call of the other.
type Volumes interface {
	// MountPod blocks until every volume of the pod is mounted. It honours
	// ctx cancellation.
	MountPod(ctx context.Context, pod *v1.Pod) error
	// UnmountPod returns nil once no volume of the pod is mounted.
	UnmountPod(ctx context.Context, pod *v1.Pod) error
}

// StatusSink stores pod statuses outside the node agent: a local store, or
// the API server. Calls for one pod are never concurrent.
type StatusSink interface {
	// Get returns the stored pod. A missing pod gives an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, namespace, name string) (*v1.Pod, error)
	// Put writes the status of the pod with the given UID. A pod stored
	// under another UID gives an error wrapping ErrUIDMismatch.
	Put(ctx context.Context, namespace, name string, uid types.UID, status v1.PodStatus) error
	// Delete removes the pod with grace 0 and a UID precondition.
	Delete(ctx context.Context, namespace, name string, uid types.UID) error
	// Forget ends a sync that read the pod with this UID (the UID Get
	// returned): the sink may drop what it kept of the read for a Put
	// (the API server's sink keeps the status read, the base of the
	// patch), so that it keeps nothing of a pod between two syncs.
	Forget(uid types.UID)
}

// Recorder receives user-facing events (FailedSync, ExceededGracePeriod, …).
// It must not block.
type Recorder interface {
	Event(pod *v1.Pod, eventType, reason, message string)
}

// Jitter returns a duration in [d, d+d*factor). It must be safe for
// concurrent use. Tests inject a fixed one; drivers use a seeded source.
type Jitter func(d time.Duration, factor float64) time.Duration

// NoJitter is a Jitter that returns d unchanged.
func NoJitter(d time.Duration, _ float64) time.Duration { return d }

// Event types for Recorder.
const (
	EventNormal  = "Normal"
	EventWarning = "Warning"
)
