package lifecycle

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podSyncStatus is the per-UID record of the pod worker.
type podSyncStatus struct {
	uid      types.UID
	fullname string
	// notify is the doorbell of the worker loop (capacity 1). It is nil
	// once closed or before the loop was started.
	notify chan struct{}
	// inflight is the ID of the work handed out and not yet completed,
	// inflightType its phase.
	inflight     uint64
	inflightType WorkType
	// cancelled is the ID of the last work whose cancellation was asked
	// for, so that it is asked for once.
	cancelled uint64
	// working is true while an update is pending or in progress.
	working bool
	pending *UpdatePodOptions
	active  *UpdatePodOptions

	syncedAt, startedAt, terminatingAt, terminatedAt time.Time
	// lastSyncEnd is when the last sync* call returned: the next call must
	// see a runtime status newer than it.
	lastSyncEnd time.Time
	gracePeriod int64

	notifyPostTerminating []chan<- struct{}
	statusPostTerminating []func(*v1.PodStatus)

	startedTerminating bool
	deleted            bool
	evicted            bool
	finished           bool
	restartRequested   bool
	observedRuntime    bool
}

func (s *podSyncStatus) isStarted() bool              { return !s.startedAt.IsZero() }
func (s *podSyncStatus) isTerminationRequested() bool { return !s.terminatingAt.IsZero() }
func (s *podSyncStatus) isTerminated() bool           { return !s.terminatedAt.IsZero() }

// workType derives the phase from the timestamps.
func (s *podSyncStatus) workType() WorkType {
	switch {
	case s.isTerminated():
		return WorkTerminated
	case s.isTerminationRequested():
		return WorkTerminating
	}
	return WorkSync
}

// syncToCancel returns the ID of the in-flight SyncPod once termination
// was requested, the first time it is asked, else 0. Every path that
// requests termination calls it: from that moment the sync must start no
// container, and only its cancelled context tells it so.
func (s *podSyncStatus) syncToCancel() uint64 {
	if s.inflight == 0 || s.inflightType != WorkSync || !s.isTerminationRequested() || s.cancelled == s.inflight {
		return 0
	}
	s.cancelled = s.inflight
	return s.inflight
}

// signal rings the doorbell without blocking.
func (s *podSyncStatus) signal() {
	if s.notify == nil {
		return
	}
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// closeNotify closes the doorbell so that the worker loop exits.
func (s *podSyncStatus) closeNotify() {
	if s.notify != nil {
		close(s.notify)
		s.notify = nil
	}
}

// knownPod returns the config pod the worker knows: active, else pending.
func (s *podSyncStatus) knownPod() *v1.Pod {
	if s.active != nil && s.active.Pod != nil {
		return s.active.Pod
	}
	if s.pending != nil {
		return s.pending.Pod
	}
	return nil
}

// mergeLastUpdate folds an update into the active update, the state that
// downstream components see. UpdateType and StartTime are not kept.
func (s *podSyncStatus) mergeLastUpdate(u UpdatePodOptions) {
	a := s.active
	if a == nil {
		a = &UpdatePodOptions{}
		s.active = a
	}
	if u.RunningPod == nil || a.Pod == nil {
		a.Pod = u.Pod
	}
	a.RunningPod = u.RunningPod
	if u.MirrorPod != nil {
		a.MirrorPod = u.MirrorPod
	}
	if k := u.KillPodOptions; k != nil {
		if a.KillPodOptions == nil {
			a.KillPodOptions = &KillPodOptions{}
		}
		a.KillPodOptions.Evict = a.KillPodOptions.Evict || k.Evict
		if k.GracePeriodOverride != nil {
			g := *k.GracePeriodOverride
			a.KillPodOptions.GracePeriodOverride = &g
		}
	}
}

// replay returns a copy of the active update as a zero-typed sync request.
func (s *podSyncStatus) replay() *UpdatePodOptions {
	if s.active == nil {
		return nil
	}
	u := &UpdatePodOptions{Pod: s.active.Pod, MirrorPod: s.active.MirrorPod, RunningPod: s.active.RunningPod}
	if k := s.active.KillPodOptions; k != nil {
		kc := *k
		u.KillPodOptions = &kc
	}
	return u
}

// Config-source annotations that tell static and mirror pods apart.
const (
	// ConfigSourceAnnotation names the source of a pod; a source other than
	// "api" makes the pod static.
	ConfigSourceAnnotation = "kubernetes.io/config.source"
	// ConfigMirrorAnnotation marks a mirror pod.
	ConfigMirrorAnnotation = "kubernetes.io/config.mirror"
	// APISource is the config source of pods from the API server.
	APISource = "api"
	// ConfigFirstSeenAnnotation holds the RFC 3339 time at which a config
	// source first saw the pod. The start latency metrics count from it.
	ConfigFirstSeenAnnotation = "kubernetes.io/config.seen"
)

// PodFirstSeen returns the time of the config.seen annotation, or the zero
// time when it is missing or malformed.
func PodFirstSeen(pod *v1.Pod) time.Time {
	v, ok := pod.Annotations[ConfigFirstSeenAnnotation]
	if !ok {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}
	}
	return t
}

// IsStaticPod reports whether the pod comes from a non-API source.
func IsStaticPod(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	src, ok := pod.Annotations[ConfigSourceAnnotation]
	return ok && src != APISource
}

// IsMirrorPod reports whether the pod is the API mirror of a static pod.
func IsMirrorPod(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	_, ok := pod.Annotations[ConfigMirrorAnnotation]
	return ok
}

func isTerminalPhase(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

// podFromRunning synthesises an API pod from a runtime pod, for decisions only.
func podFromRunning(r *RunningPod) *v1.Pod {
	p := &v1.Pod{}
	p.UID, p.Name, p.Namespace = r.ID, r.Name, r.Namespace
	return p
}
