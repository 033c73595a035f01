package lifecycle

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// SyncKnownPods is called by housekeeping only, never concurrently with
// UpdatePod for new pods. It marks the pods as synced, purges finished
// workers that are orphaned or awaiting a restart, drives unfinished
// orphans to completion by replaying their last update, and reports every
// remaining worker. The caller must re-send create for desired pods that
// are missing from the result, and must cancel the context of every work
// in cancel: the in-flight syncs of orphans that now terminate.
func (p *PodWorkers) SyncKnownPods(desired []*v1.Pod) (workers map[types.UID]PodWorkerSync, cancel []uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.podsSynced = true
	known := make(map[types.UID]struct{}, len(desired))
	for _, pod := range desired {
		known[pod.UID] = struct{}{}
	}
	out := make(map[types.UID]PodWorkerSync, len(p.statuses))
	for uid, status := range p.statuses {
		_, inConfig := known[uid]
		orphan := !inConfig
		if (orphan || status.restartRequested) && p.removeTerminatedWorker(status, orphan) {
			continue
		}
		if id := status.syncToCancel(); id != 0 {
			cancel = append(cancel, id)
		}
		sync := PodWorkerSync{State: status.workType(), Orphan: orphan}
		if pod := status.knownPod(); pod != nil {
			sync.HasConfig = true
			sync.Static = IsStaticPod(pod)
		}
		out[uid] = sync
	}
	return out, cancel
}

// removeTerminatedWorker purges a finished worker, or a never-started
// orphan, and returns true. Otherwise it drives an orphan toward
// completion and returns false.
func (p *PodWorkers) removeTerminatedWorker(status *podSyncStatus, orphan bool) bool {
	if !status.finished {
		if !orphan {
			return false
		}
		if !status.isStarted() && !status.observedRuntime {
			p.forget(status)
			return true
		}
		status.deleted = true
		p.requeueLastUpdate(status)
		return false
	}
	p.forget(status)
	return true
}

func (p *PodWorkers) forget(status *podSyncStatus) {
	status.closeNotify()
	p.releaseFullname(status)
	delete(p.statuses, status.uid)
}

// requeueLastUpdate makes an orphan terminate (if it was not already) and
// replays its last update so that the worker runs again.
func (p *PodWorkers) requeueLastUpdate(status *podSyncStatus) {
	if !status.isTerminationRequested() {
		status.deleted = true
		status.terminatingAt = p.cfg.Clock.Now()
		var pod *v1.Pod
		if status.active != nil {
			pod = status.active.Pod
		}
		status.gracePeriod, _ = effectiveGracePeriod(status.gracePeriod, pod, nil)
	}
	if status.pending == nil {
		status.pending = status.replay()
	}
	if status.pending == nil {
		return
	}
	status.working = true
	status.signal()
}

// IsPodKnownTerminated reports whether the UID is known and its containers
// are all stopped. Unknown UIDs give false, including purged ones.
func (p *PodWorkers) IsPodKnownTerminated(uid types.UID) bool {
	return p.query(uid, false, func(s *podSyncStatus) bool { return s.isTerminated() })
}

// CouldHaveRunningContainers reports whether containers of the UID may run.
// Unknown UIDs are possibly running until the first SyncKnownPods.
func (p *PodWorkers) CouldHaveRunningContainers(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.statuses[uid]; ok {
		return !s.isTerminated()
	}
	return !p.podsSynced
}

// ShouldPodBeFinished reports whether SyncTerminatedPod has succeeded.
func (p *PodWorkers) ShouldPodBeFinished(uid types.UID) bool {
	return p.query(uid, true, func(s *podSyncStatus) bool { return s.finished })
}

// IsPodTerminationRequested reports whether termination was requested,
// which may be true while SyncPod still runs. Unknown UIDs give false.
func (p *PodWorkers) IsPodTerminationRequested(uid types.UID) bool {
	return p.query(uid, false, func(s *podSyncStatus) bool { return s.isTerminationRequested() })
}

// ShouldPodContainersBeTerminating reports whether the worker has observed
// termination: no container of the pod will be started again.
func (p *PodWorkers) ShouldPodContainersBeTerminating(uid types.UID) bool {
	return p.query(uid, true, func(s *podSyncStatus) bool { return s.startedTerminating })
}

// ShouldPodRuntimeBeRemoved reports whether what running containers use
// (volumes, devices) may be torn down.
func (p *PodWorkers) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	return p.query(uid, true, func(s *podSyncStatus) bool { return s.isTerminated() })
}

// ShouldPodContentBeRemoved reports whether on-disk content may be deleted.
func (p *PodWorkers) ShouldPodContentBeRemoved(uid types.UID) bool {
	return p.query(uid, true, func(s *podSyncStatus) bool { return s.evicted || (s.deleted && s.isTerminated()) })
}

// IsPodForMirrorPodTerminatingByFullName reports whether the started static
// pod of that full name is terminating but not yet terminated.
func (p *PodWorkers) IsPodForMirrorPodTerminatingByFullName(fullname string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	uid, ok := p.startedStatic[fullname]
	if !ok {
		return false
	}
	s, ok := p.statuses[uid]
	return ok && s.isTerminationRequested() && !s.isTerminated()
}

// query answers f for a known UID; an unknown UID gives podsSynced when
// unknownIsSynced, else false.
func (p *PodWorkers) query(uid types.UID, unknownIsSynced bool, f func(*podSyncStatus) bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.statuses[uid]; ok {
		return f(s)
	}
	return unknownIsSynced && p.podsSynced
}

// PodWorkerState is a snapshot of one worker, for tests and debugging.
type PodWorkerState struct {
	UID                                              types.UID
	Fullname                                         string
	Working                                          bool
	Signalled                                        bool
	Pending, Active                                  *UpdatePodOptions
	SyncedAt, StartedAt, TerminatingAt, TerminatedAt time.Time
	GracePeriod                                      int64
	StartedTerminating, Deleted, Evicted, Finished   bool
	RestartRequested, ObservedRuntime, HasWorker     bool
}

// Inspect returns a snapshot of the worker of a UID.
func (p *PodWorkers) Inspect(uid types.UID) (PodWorkerState, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.statuses[uid]
	if !ok {
		return PodWorkerState{}, false
	}
	st := PodWorkerState{
		UID: uid, Fullname: s.fullname, Working: s.working, Signalled: len(s.notify) > 0,
		SyncedAt: s.syncedAt, StartedAt: s.startedAt, TerminatingAt: s.terminatingAt, TerminatedAt: s.terminatedAt,
		GracePeriod: s.gracePeriod, StartedTerminating: s.startedTerminating, Deleted: s.deleted, Evicted: s.evicted,
		Finished: s.finished, RestartRequested: s.restartRequested, ObservedRuntime: s.observedRuntime,
		HasWorker: s.notify != nil,
	}
	if s.pending != nil {
		c := *s.pending
		st.Pending = &c
	}
	if s.active != nil {
		c := *s.active
		st.Active = &c
	}
	return st, true
}

// UIDs returns the known UIDs (unordered).
func (p *PodWorkers) UIDs() []types.UID {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]types.UID, 0, len(p.statuses))
	for uid := range p.statuses {
		out = append(out, uid)
	}
	return out
}

// StaticPods returns the started holder of each full name and the waiting
// lists, for tests and debugging.
func (p *PodWorkers) StaticPods() (started map[string]types.UID, waiting map[string][]types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	started = make(map[string]types.UID, len(p.startedStatic))
	for k, v := range p.startedStatic {
		started[k] = v
	}
	waiting = make(map[string][]types.UID, len(p.waitingStatic))
	for k, v := range p.waitingStatic {
		waiting[k] = append([]types.UID(nil), v...)
	}
	return started, waiting
}

// Working reports whether any worker has pending or in-progress work.
func (p *PodWorkers) Working() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.statuses {
		if s.working {
			return true
		}
	}
	return false
}
