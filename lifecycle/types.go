package lifecycle

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// UpdateType says why a pod update was sent to the pod worker. The zero value
// is UpdateSync, so a replayed update counts as a sync.
type UpdateType int

const (
	// UpdateSync asks the worker to converge the pod again (periodic resync).
	UpdateSync UpdateType = iota
	// UpdateUpdate carries a changed pod from config.
	UpdateUpdate
	// UpdateCreate carries a pod seen for the first time (or re-created).
	UpdateCreate
	// UpdateKill asks the worker to terminate the pod.
	UpdateKill
)

// String returns the metric label of the update type.
func (t UpdateType) String() string {
	switch t {
	case UpdateSync:
		return "sync"
	case UpdateUpdate:
		return "update"
	case UpdateCreate:
		return "create"
	case UpdateKill:
		return "kill"
	}
	return "unknown"
}

// WorkType is the phase a pod worker is in.
type WorkType int

const (
	// WorkSync means the pod may run: SyncPod is called.
	WorkSync WorkType = iota
	// WorkTerminating means termination was requested: SyncTerminatingPod is called.
	WorkTerminating
	// WorkTerminated means no container runs: SyncTerminatedPod is called.
	WorkTerminated
)

// String returns the lifecycle label of the work type.
func (w WorkType) String() string {
	switch w {
	case WorkSync:
		return "sync"
	case WorkTerminating:
		return "terminating"
	case WorkTerminated:
		return "terminated"
	}
	return "unknown"
}

// KillPodOptions refine a kill request.
type KillPodOptions struct {
	// CompletedCh is closed once the pod has reached the terminated state.
	CompletedCh chan<- struct{}
	// Evict marks the kill as an eviction; it is sticky.
	Evict bool
	// PodStatusFunc mutates the status reported while terminating. Only the
	// last callback received before termination is used.
	PodStatusFunc func(*v1.PodStatus)
	// GracePeriodOverride, when set, caps the grace period in seconds.
	GracePeriodOverride *int64
}

// UpdatePodOptions is one request to the pod worker.
type UpdatePodOptions struct {
	// UpdateType is the reason for the request.
	UpdateType UpdateType
	// StartTime, when set, starts the worker-latency measurement.
	StartTime time.Time
	// Pod is the config pod. It is required unless RunningPod is set.
	Pod *v1.Pod
	// MirrorPod is the mirror of a static pod; nil keeps the last known one.
	MirrorPod *v1.Pod
	// RunningPod describes a pod known only to the runtime. It is valid
	// only when Pod is nil and only with UpdateKill.
	RunningPod *RunningPod
	// KillPodOptions are valid only while the pod is terminating.
	KillPodOptions *KillPodOptions
}

// ContainerState is the runtime state of one container.
type ContainerState string

// The container states the runtime reports.
const (
	ContainerCreated ContainerState = "created"
	ContainerRunning ContainerState = "running"
	ContainerExited  ContainerState = "exited"
	ContainerUnknown ContainerState = "unknown"
)

// RunningContainer is a container as listed by the runtime.
type RunningContainer struct {
	ID    string
	Name  string
	State ContainerState
}

// RunningPod is a pod as listed by the runtime: it may exist without config.
type RunningPod struct {
	ID         types.UID
	Name       string
	Namespace  string
	Containers []RunningContainer
	// SandboxReady reports whether the pod sandbox is up.
	SandboxReady bool
}

// IsRunning reports whether the sandbox is ready or a container runs.
func (r *RunningPod) IsRunning() bool {
	if r.SandboxReady {
		return true
	}
	for _, c := range r.Containers {
		if c.State == ContainerRunning {
			return true
		}
	}
	return false
}

// ContainerStatus is the runtime's detailed view of one container.
type ContainerStatus struct {
	ID           string
	Name         string
	State        ContainerState
	CreatedAt    time.Time
	StartedAt    time.Time
	FinishedAt   time.Time
	ExitCode     int32
	Reason       string
	Message      string
	RestartCount int32
	// ImageID is the image the container runs, as the runtime resolved it
	// (a digest reference); reported as the status's imageID.
	ImageID string
	// Resources are the container's own cpu and memory requests and
	// limits the runtime has actuated (ResizableResources of the spec it
	// was created or last resized with); nil when unknown.
	Resources *v1.ResourceRequirements
	// ResetByRestartAll: the container belongs to a run of the pod that a
	// RestartAllContainers rule ended (RestartsAll): the pod started again
	// from its init containers in the same sandbox, and the container's
	// next instance waits for its turn in the new run.
	ResetByRestartAll bool
}

// PodStatus is the runtime's view of a pod at one moment.
type PodStatus struct {
	ID                types.UID
	Name              string
	Namespace         string
	IPs               []string
	SandboxReady      bool
	ContainerStatuses []ContainerStatus
	// Resources are the pod-level cpu and memory the runtime has actuated
	// on the pod's cgroup; nil when the pod has none or it is unknown.
	Resources *v1.ResourceRequirements
	// ResizeError is why the last in-place resize of the pod failed; empty
	// when none failed since the last one completed.
	ResizeError string
}

// HasRunning reports whether any container runs or the sandbox is ready.
func (s *PodStatus) HasRunning() bool {
	if s == nil {
		return false
	}
	if s.SandboxReady {
		return true
	}
	for i := range s.ContainerStatuses {
		if s.ContainerStatuses[i].State == ContainerRunning {
			return true
		}
	}
	return false
}

// Container returns the newest status of the named container, or nil.
func (s *PodStatus) Container(name string) *ContainerStatus {
	if s == nil {
		return nil
	}
	var found *ContainerStatus
	for i := range s.ContainerStatuses {
		c := &s.ContainerStatuses[i]
		if c.Name == name && (found == nil || c.CreatedAt.After(found.CreatedAt)) {
			found = c
		}
	}
	return found
}

// previous returns the newest exited instance of cs's container created
// before cs, or nil: the end of its last run, as the kubelet reports it.
func (s *PodStatus) previous(cs *ContainerStatus) *ContainerStatus {
	var found *ContainerStatus
	for i := range s.ContainerStatuses {
		c := &s.ContainerStatuses[i]
		if c.Name != cs.Name || c.ID == cs.ID || c.State != ContainerExited || !c.CreatedAt.Before(cs.CreatedAt) {
			continue
		}
		if found == nil || c.CreatedAt.After(found.CreatedAt) {
			found = c
		}
	}
	return found
}

// PodWorkerSync is what SyncKnownPods reports for one worker.
type PodWorkerSync struct {
	State     WorkType
	Orphan    bool
	HasConfig bool
	Static    bool
}

// fullName is the key used for static pod exclusion: name_namespace.
func fullName(name, namespace string) string { return name + "_" + namespace }

// PodFullName returns name_namespace of a pod.
func PodFullName(pod *v1.Pod) string { return fullName(pod.Name, pod.Namespace) }
