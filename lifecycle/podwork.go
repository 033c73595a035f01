package lifecycle

import (
	"context"
	"errors"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Work is one sync* call the driver must perform for a pod.
type Work struct {
	// ID identifies the work for cancellation and completion.
	ID       uint64
	UID      types.UID
	WorkType WorkType
	// UpdateType is the type of the consumed request (SyncPod only).
	UpdateType UpdateType
	Pod        *v1.Pod
	MirrorPod  *v1.Pod
	// RunningPod is set for a pod known only to the runtime: the driver
	// calls SyncTerminatingRuntimePod and reads no status.
	RunningPod *RunningPod
	// GracePeriod is the grace stamped into the kill options, or nil.
	GracePeriod *int64
	// StatusFunc is the last status callback of a kill, or nil.
	StatusFunc func(*v1.PodStatus)
	// StartTime is the oldest StartTime of the coalesced requests.
	StartTime time.Time
	// StatusNewerThan is the end of the previous sync: the runtime status
	// handed to the syncer must be newer than it.
	StatusNewerThan time.Time
}

// RuntimeOnly reports whether the work concerns a pod without config.
func (w Work) RuntimeOnly() bool { return w.RunningPod != nil && w.Pod == nil }

// BeginOutcome says what the worker loop does after Begin.
type BeginOutcome int

const (
	// BeginIdle means there is nothing to do until the next signal.
	BeginIdle BeginOutcome = iota
	// BeginRun means the returned work must be performed, then completed.
	BeginRun
	// BeginExit means the worker is done: the loop exits.
	BeginExit
)

// WorkResult is the outcome of a sync* call.
type WorkResult struct {
	// IsTerminal is SyncPod's report that the pod finished by itself.
	IsTerminal bool
	Err        error
}

// Begin consumes the pending request of a UID and decides the next call.
func (p *PodWorkers) Begin(uid types.UID) (Work, BeginOutcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	status, ok := p.statuses[uid]
	if !ok {
		return Work{}, BeginExit
	}
	if status.pending == nil {
		status.working = false
		return Work{}, BeginIdle
	}
	update := *status.pending
	status.pending = nil
	wt := status.workType()
	if status.notify != nil {
		select {
		case <-status.notify:
		default:
		}
	}

	switch {
	case status.isStarted():
		status.mergeLastUpdate(update)
	case update.RunningPod != nil && update.Pod == nil && wt == WorkTerminating:
		status.mergeLastUpdate(update)
	case update.Pod == nil:
		status.mergeLastUpdate(update)
		status.working = false
		p.log.Error("runtime-only update outside termination cannot start a pod", "uid", uid)
		return Work{}, BeginIdle
	default:
		canStart, canEverStart := p.allowPodStart(update.Pod, status)
		switch {
		case !canEverStart:
			p.cleanupUnstarted(status, update)
			return Work{}, BeginExit
		case !canStart:
			status.pending = &update
			status.working = false
			return Work{}, BeginIdle
		}
		now := p.cfg.Clock.Now()
		status.startedAt = now
		status.mergeLastUpdate(update)
		p.cfg.Metrics.observeContainersPerPod(len(update.Pod.Spec.Containers))
	}

	p.nextWorkID++
	a := status.active
	w := Work{
		ID: p.nextWorkID, UID: uid, WorkType: wt, UpdateType: update.UpdateType,
		Pod: a.Pod, MirrorPod: a.MirrorPod, StartTime: update.StartTime,
		StatusNewerThan: status.lastSyncEnd,
	}
	if wt == WorkTerminating {
		status.startedTerminating = true
		if n := len(status.statusPostTerminating); n > 0 {
			w.StatusFunc = status.statusPostTerminating[n-1]
		}
		if a.Pod == nil {
			w.RunningPod = a.RunningPod
		}
		if k := a.KillPodOptions; k != nil && k.GracePeriodOverride != nil {
			g := *k.GracePeriodOverride
			w.GracePeriod = &g
		}
	}
	status.inflight, status.inflightType = w.ID, wt
	return w, BeginRun
}

// Complete records the result of a work and returns true when the worker
// loop must exit.
func (p *PodWorkers) Complete(w Work, res WorkResult) (exit bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	status, ok := p.statuses[w.UID]
	if !ok {
		return true
	}
	if status.inflight == w.ID {
		status.inflight = 0
	}
	now := p.cfg.Clock.Now()
	status.lastSyncEnd = now
	transition := false
	switch {
	case errors.Is(res.Err, context.Canceled):
		p.log.Debug("sync interrupted", "pod", status.fullname, "uid", w.UID, "work", w.WorkType.String())
	case res.Err != nil:
		p.log.Info("sync failed", "pod", status.fullname, "uid", w.UID, "work", w.WorkType.String(), "err", res.Err)
	case w.WorkType == WorkTerminated:
		status.closeNotify()
		status.finished = true
		status.working = false
		p.releaseFullname(status)
		p.cfg.Metrics.observeWorkerDuration("terminated", w.StartTime, now)
		return true
	case w.WorkType == WorkTerminating && w.RuntimeOnly():
		status.closeNotify()
		status.terminatedAt = now
		status.finished = true
		status.working = false
		p.releaseFullname(status)
		delete(p.statuses, w.UID)
		p.cfg.Metrics.observeWorkerDuration(w.UpdateType.String(), w.StartTime, now)
		return true
	case w.WorkType == WorkTerminating:
		status.terminatedAt = now
		for _, ch := range status.notifyPostTerminating {
			close(ch)
		}
		status.notifyPostTerminating = nil
		status.statusPostTerminating = nil
		if status.pending == nil {
			status.pending = status.replay()
		}
		transition = true
	case w.WorkType == WorkSync && res.IsTerminal:
		if status.terminatingAt.IsZero() {
			status.terminatingAt = now
		}
		status.startedTerminating = true
		if status.pending == nil {
			status.pending = status.replay()
		}
		transition = true
	}
	p.completeWork(status, transition, res.Err)
	p.cfg.Metrics.observeWorkerDuration(w.UpdateType.String(), w.StartTime, now)
	return false
}

// completeWork schedules the next sync of the UID and re-signals pending work.
func (p *PodWorkers) completeWork(status *podSyncStatus, transition bool, err error) {
	var delay time.Duration
	var retry RetryAfterError
	switch {
	case transition:
	case err == nil, errors.Is(err, context.Canceled):
		// A cancelled sync did not fail: whatever cancelled it is pending
		// and signalled, and it gets no error back-off.
		delay = p.cfg.Jitter(p.cfg.ResyncInterval, jitterFactor)
	case errors.Is(err, ErrNetworkNotReady):
		delay = p.cfg.Jitter(networkBackOffPeriod, jitterFactor)
	case errors.As(err, &retry):
		delay = max(retry.RetryAfter(), 0)
	default:
		delay = p.cfg.Jitter(p.cfg.BackOffPeriod, jitterFactor)
	}
	p.cfg.Queue.Enqueue(status.uid, delay)
	if status.pending != nil {
		status.signal()
	} else {
		status.working = false
	}
}

// cleanupUnstarted finishes a pod that never started and never will.
func (p *PodWorkers) cleanupUnstarted(status *podSyncStatus, update UpdatePodOptions) {
	now := p.cfg.Clock.Now()
	status.closeNotify()
	status.finished = true
	status.working = false
	status.terminatedAt = now
	if status.terminatingAt.IsZero() {
		status.terminatingAt = now
	}
	for _, ch := range status.notifyPostTerminating {
		close(ch)
	}
	status.notifyPostTerminating, status.statusPostTerminating = nil, nil
	p.releaseFullname(status)
	p.cfg.Metrics.observeWorkerDuration("terminated", update.StartTime, now)
}

// releaseFullname frees a static pod's full name held by this UID.
func (p *PodWorkers) releaseFullname(status *podSyncStatus) {
	if p.startedStatic[status.fullname] == status.uid {
		delete(p.startedStatic, status.fullname)
	}
}

// allowPodStart decides whether a pod may start now (canStart) or ever
// (canEverStart). Only static pods are ever refused: one UID per full name.
func (p *PodWorkers) allowPodStart(pod *v1.Pod, status *podSyncStatus) (canStart, canEverStart bool) {
	if !IsStaticPod(pod) {
		return true, true
	}
	if status == nil || status.isTerminationRequested() {
		return false, false
	}
	if !p.allowStaticPodStart(status.fullname, status.uid) {
		p.cfg.Queue.Enqueue(status.uid, p.cfg.Jitter(p.cfg.BackOffPeriod, jitterFactor))
		return false, true
	}
	return true, true
}

// allowStaticPodStart lets the holder of a full name, or the first valid
// waiter when there is no holder, start. Waiters that are gone, terminating
// or terminated are skipped and trimmed from the front of the list.
func (p *PodWorkers) allowStaticPodStart(fullname string, uid types.UID) bool {
	if holder, ok := p.startedStatic[fullname]; ok {
		return holder == uid
	}
	waiting := p.waitingStatic[fullname]
	for i, w := range waiting {
		s, ok := p.statuses[w]
		if !ok || s.isTerminationRequested() {
			continue
		}
		if w != uid {
			p.setWaiting(fullname, waiting[i:])
			return false
		}
		p.setWaiting(fullname, waiting[i+1:])
		p.startedStatic[fullname] = uid
		return true
	}
	p.setWaiting(fullname, nil)
	p.startedStatic[fullname] = uid
	return true
}

func (p *PodWorkers) setWaiting(fullname string, uids []types.UID) {
	if len(uids) == 0 {
		delete(p.waitingStatic, fullname)
		return
	}
	p.waitingStatic[fullname] = uids
}
