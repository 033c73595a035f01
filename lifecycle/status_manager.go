package lifecycle

import (
	"log/slog"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// StatusSyncPeriod is the period of the full status batch.
const StatusSyncPeriod = 10 * time.Second

// PodStateProvider is what the status manager asks the pod worker.
type PodStateProvider interface {
	// CouldHaveRunningContainers reports whether a container may still run.
	CouldHaveRunningContainers(uid types.UID) bool
	// IsPodTerminationRequested reports whether the pod is terminating.
	IsPodTerminationRequested(uid types.UID) bool
}

// PodLookup resolves config pods and mirror pods. It may be nil: then
// static pods are never written to a sink and nothing is reconciled.
type PodLookup interface {
	// Pod returns the config pod with the UID.
	Pod(uid types.UID) (*v1.Pod, bool)
	// MirrorPod returns the mirror pod of a static pod.
	MirrorPod(static *v1.Pod) (*v1.Pod, bool)
	// StaticPodUID translates a mirror pod UID to its static pod UID.
	StaticPodUID(mirror types.UID) (types.UID, bool)
}

// versionedPodStatus is one cached status.
type versionedPodStatus struct {
	version uint64
	pod     *v1.Pod
	// at is the time of the first change not yet written to the sink.
	at            metav1.Time
	podIsFinished bool
	status        v1.PodStatus
}

// StatusManager keeps the newest status of every pod, versioned, and
// writes it to a sink in batches. A terminal phase never regresses, a
// container without a status is reported as exit 137, a terminating pod
// reports no newly started container, and the sink deletes a pod only once
// it is finished. All methods are safe for concurrent use; SyncBatch must
// be called by one goroutine at a time.
type StatusManager struct {
	mu       sync.Mutex
	clock    Clock
	sink     StatusSink
	pods     PodStateProvider
	lookup   PodLookup
	metrics  *Metrics
	probes   ProbeView
	log      *slog.Logger
	statuses map[types.UID]*versionedPodStatus
	// apiVersions is the last version written per sink UID (mirror UID for
	// static pods). Only SyncBatch touches it, under syncMu.
	syncMu      sync.Mutex
	apiVersions map[types.UID]uint64
	doorbell    chan struct{}
	// changed is closed, and replaced, on every new version (guarded by mu).
	changed chan struct{}
}

// StatusManagerConfig wires a StatusManager. Sink, Lookup and Metrics may
// be nil.
type StatusManagerConfig struct {
	Clock   Clock
	Sink    StatusSink
	Pods    PodStateProvider
	Lookup  PodLookup
	Metrics *Metrics
	Logger  *slog.Logger
	// Probes, when set, decide started and ready of running containers
	// and so the ContainersReady and Ready conditions. Nil means every
	// running container is started and ready.
	Probes ProbeView
}

// NewStatusManager returns an empty status manager.
func NewStatusManager(cfg StatusManagerConfig) *StatusManager {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &StatusManager{
		clock: cfg.Clock, sink: cfg.Sink, pods: cfg.Pods, lookup: cfg.Lookup, metrics: cfg.Metrics, probes: cfg.Probes, log: log,
		statuses:    map[types.UID]*versionedPodStatus{},
		apiVersions: map[types.UID]uint64{},
		doorbell:    make(chan struct{}, 1),
		changed:     make(chan struct{}),
	}
}

// Doorbell receives a signal when a status changed; the sync loop then
// calls SyncBatch(false). Signals coalesce: none is ever needed twice.
func (m *StatusManager) Doorbell() <-chan struct{} { return m.doorbell }

// Changed returns a channel that is closed at the next new version of any
// pod's status. Unlike the doorbell it serves any number of readers: each
// takes the channel before it reads, and waits on it afterwards, so no
// change between the read and the wait is missed.
func (m *StatusManager) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

// PodStatus returns the cached status, translating a mirror UID.
func (m *StatusManager) PodStatus(uid types.UID) (v1.PodStatus, bool) {
	if m.lookup != nil {
		if s, ok := m.lookup.StaticPodUID(uid); ok {
			uid = s
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.statuses[uid]
	if !ok {
		return v1.PodStatus{}, false
	}
	return *st.status.DeepCopy(), true
}

// Version returns the cached version of a pod's status (0 if none).
func (m *StatusManager) Version(uid types.UID) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.statuses[uid]; ok {
		return st.version
	}
	return 0
}

// SetPodStatus caches a new status for the pod. The update is forced when
// the pod has a deletion timestamp.
func (m *StatusManager) SetPodStatus(pod *v1.Pod, status v1.PodStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.updateLocked(pod, *status.DeepCopy(), pod.DeletionTimestamp != nil, false)
}

// TerminatePod marks the pod finished: every container that is not
// terminated is reported as lost (exit 137, ContainerStatusUnknown), and a
// non-terminal phase becomes Failed (static pods keep their phase).
func (m *StatusManager) TerminatePod(pod *v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	status := *pod.Status.DeepCopy()
	if cached, ok := m.statuses[pod.UID]; ok {
		status = *cached.status.DeepCopy()
	}
	defaultLostContainers(pod, &status)
	if !IsStaticPod(pod) {
		switch status.Phase {
		case v1.PodSucceeded, v1.PodFailed:
		default:
			status.Phase = v1.PodFailed
		}
	}
	m.updateLocked(pod, status, true, true)
}

// RefreshProbes applies the probe results again to the cached status of
// the pod: the probe workers call it when a result changed.
func (m *StatusManager) RefreshProbes(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cached, ok := m.statuses[uid]
	if !ok || m.probes == nil {
		return
	}
	m.updateLocked(cached.pod, *cached.status.DeepCopy(), false, cached.podIsFinished)
}

// RemoveOrphanedStatuses forgets every status whose UID is not kept.
func (m *StatusManager) RemoveOrphanedStatuses(keep map[types.UID]struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for uid := range m.statuses {
		if _, ok := keep[uid]; !ok {
			delete(m.statuses, uid)
		}
	}
}

// updateLocked is the single write path. It returns false when nothing
// changed.
func (m *StatusManager) updateLocked(pod *v1.Pod, status v1.PodStatus, force, podIsFinished bool) bool {
	now := m.clock.Now()
	cached, hasCached := m.statuses[pod.UID]
	var old v1.PodStatus
	switch {
	case hasCached:
		old = cached.status
	default:
		old = pod.Status
		if m.lookup != nil && IsStaticPod(pod) {
			if mirror, ok := m.lookup.MirrorPod(pod); ok {
				old = mirror.Status
			}
		}
	}
	if hasCached && cached.podIsFinished && !podIsFinished && !IsStaticPod(pod) {
		podIsFinished = true
	}
	if name, bad := illegalRegression(pod, &old, &status); bad {
		m.log.Error("rejecting status update: a terminated container cannot restart under this policy",
			"pod", PodFullName(pod), "uid", pod.UID, "container", name)
		return false
	}
	if isTerminalPhase(old.Phase) && status.Phase != old.Phase {
		m.log.Error("illegal phase transition; keeping the terminal phase", "pod", PodFullName(pod), "uid", pod.UID,
			"from", old.Phase, "to", status.Phase)
		status.Phase, status.Reason, status.Message = old.Phase, old.Reason, old.Message
	}
	if m.probes != nil && hasProbes(pod) {
		applyProbes(pod, &status, m.probes)
	}
	if pod.DeletionTimestamp != nil || (m.pods != nil && m.pods.IsPodTerminationRequested(pod.UID)) {
		suppressNewStarts(old.ContainerStatuses, status.ContainerStatuses)
		suppressNewStarts(old.InitContainerStatuses, status.InitContainerStatuses)
	}
	carryTransitionTimes(&old, &status, now)
	switch {
	case old.StartTime != nil && !old.StartTime.IsZero():
		status.StartTime = old.StartTime.DeepCopy()
	case status.StartTime == nil || status.StartTime.IsZero():
		t := metav1.NewTime(now)
		status.StartTime = &t
	}
	normalizeStatus(pod, &status)
	if hasCached && !force && cached.podIsFinished == podIsFinished && apiequality.Semantic.DeepEqual(cached.status, status) {
		return false
	}
	next := &versionedPodStatus{pod: pod, status: status, podIsFinished: podIsFinished, at: metav1.NewTime(now)}
	if hasCached {
		next.version = cached.version + 1
		if !cached.at.IsZero() {
			next.at = cached.at
		}
	} else {
		next.version = 1
	}
	m.statuses[pod.UID] = next
	close(m.changed)
	m.changed = make(chan struct{})
	select {
	case m.doorbell <- struct{}{}:
	default:
	}
	return true
}

// suppressNewStarts keeps a terminating pod from reporting a container as
// started when it had not started before termination: the pod worker
// starts no container after termination, so such a report is stale.
func suppressNewStarts(old, new []v1.ContainerStatus) {
	for i := range new {
		if !isRunningState(&new[i]) {
			continue
		}
		prev := (*v1.ContainerStatus)(nil)
		for j := range old {
			if old[j].Name == new[i].Name {
				prev = &old[j]
			}
		}
		if prev == nil || !hasStarted(prev) {
			if prev != nil {
				new[i] = *prev.DeepCopy()
			} else {
				new[i].State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodTerminating"}}
				new[i].Ready, new[i].Started = false, nil
			}
		}
	}
}

// defaultLostContainers reports every container that is not terminated as
// lost with exit 137, following the rules for init containers.
func defaultLostContainers(pod *v1.Pod, s *v1.PodStatus) {
	lost := func(c *v1.ContainerStatus) {
		if c.State.Terminated != nil {
			return
		}
		c.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			Reason: ReasonContainerStatusUnknown, Message: msgLostAtTermination, ExitCode: lostExitCode,
		}}
		c.Ready = false
	}
	initialized := len(s.InitContainerStatuses) == 0
	for i := range s.ContainerStatuses {
		if hasStarted(&s.ContainerStatuses[i]) {
			initialized = true
		}
	}
	if n := len(s.InitContainerStatuses); n > 0 {
		last := &s.InitContainerStatuses[n-1]
		if (last.State.Terminated != nil && last.State.Terminated.ExitCode == 0) ||
			(last.LastTerminationState.Terminated != nil && last.LastTerminationState.Terminated.ExitCode == 0) {
			initialized = true
		}
	}
	// Default every init container except the trailing run of never-started
	// ones; the first init container is always defaulted.
	end := len(s.InitContainerStatuses)
	for end > 1 {
		c := &s.InitContainerStatuses[end-1]
		if c.State.Waiting == nil || c.LastTerminationState.Terminated != nil {
			break
		}
		end--
	}
	for i := 0; i < end; i++ {
		lost(&s.InitContainerStatuses[i])
	}
	if initialized {
		for i := range s.ContainerStatuses {
			lost(&s.ContainerStatuses[i])
		}
	}
}
