package lifecycle

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// kubeletConditions are the pod conditions the node agent owns.
var kubeletConditions = map[v1.PodConditionType]bool{
	v1.PodReady: true, v1.ContainersReady: true, v1.PodInitialized: true,
	v1.PodReadyToStartContainers: true, v1.PodScheduled: true, v1.DisruptionTarget: true,
	v1.PodResizeInProgress: true, v1.PodResizePending: true, v1.AllContainersRestarting: true,
}

// SetContainerReadiness records a readiness result and recomputes the Ready
// and ContainersReady conditions. Unknown pods and containers are ignored.
func (m *StatusManager) SetContainerReadiness(uid types.UID, containerID string, ready bool) {
	m.setContainerFlag(uid, containerID, func(c *v1.ContainerStatus) bool {
		if c.Ready == ready {
			return false
		}
		c.Ready = ready
		return true
	})
}

// SetContainerStartup records a startup probe result. The first report
// (nil to false) counts as a change.
func (m *StatusManager) SetContainerStartup(uid types.UID, containerID string, started bool) {
	m.setContainerFlag(uid, containerID, func(c *v1.ContainerStatus) bool {
		if c.Started != nil && *c.Started == started {
			return false
		}
		c.Started = &started
		return true
	})
}

func (m *StatusManager) setContainerFlag(uid types.UID, containerID string, set func(*v1.ContainerStatus) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cached, ok := m.statuses[uid]
	if !ok {
		return
	}
	status := *cached.status.DeepCopy()
	var target *v1.ContainerStatus
	for i := range status.ContainerStatuses {
		if status.ContainerStatuses[i].ContainerID == containerID {
			target = &status.ContainerStatuses[i]
		}
	}
	if target == nil || !set(target) {
		return
	}
	allReady := len(status.ContainerStatuses) > 0
	for _, c := range status.ContainerStatuses {
		allReady = allReady && c.Ready
	}
	cond := v1.ConditionFalse
	if allReady {
		cond = v1.ConditionTrue
	}
	setCondition(&status, v1.PodCondition{Type: v1.ContainersReady, Status: cond})
	setCondition(&status, v1.PodCondition{Type: v1.PodReady, Status: cond})
	m.updateLocked(cached.pod, status, false, cached.podIsFinished)
}

// syncTarget is one status to write.
type syncTarget struct {
	uid, sinkUID types.UID
	namespace    string
	name         string
	mirror       bool
	st           versionedPodStatus
}

// SyncBatch writes to the sink every status newer than the sink's. With
// all, it also forgets versions of pods it no longer has, retries
// deletions, and re-writes statuses that differ from the sink's view.
func (m *StatusManager) SyncBatch(ctx context.Context, all bool) {
	if m.sink == nil {
		return
	}
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	for _, t := range m.collect(all) {
		m.syncPod(ctx, t)
	}
}

func (m *StatusManager) collect(all bool) []syncTarget {
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case <-m.doorbell:
	default:
	}
	var out []syncTarget
	sinkUIDs := make(map[types.UID]struct{}, len(m.statuses))
	for uid, st := range m.statuses {
		t := syncTarget{uid: uid, sinkUID: uid, namespace: st.pod.Namespace, name: st.pod.Name, st: *st}
		if IsStaticPod(st.pod) {
			if m.lookup == nil {
				continue
			}
			mirror, ok := m.lookup.MirrorPod(st.pod)
			if !ok {
				continue
			}
			t.sinkUID, t.mirror = mirror.UID, true
		}
		sinkUIDs[t.sinkUID] = struct{}{}
		// A finished pod is synced again only when its version moved or
		// it can be deleted now: it is never reconciled, so a pod that
		// completed is not read from the sink in every full batch.
		needs := m.apiVersions[t.sinkUID] < st.version || (all && !t.mirror && m.canBeDeleted(uid, st))
		if !needs && all && !st.podIsFinished && m.needsReconcile(uid, st) {
			delete(m.apiVersions, t.sinkUID)
			needs = true
		}
		if needs {
			out = append(out, t)
		}
	}
	if all {
		for uid := range m.apiVersions {
			if _, ok := sinkUIDs[uid]; !ok {
				delete(m.apiVersions, uid)
			}
		}
	}
	return out
}

// canBeDeleted reports a finished pod that its config pod (the lookup's)
// marks for deletion, as the kubelet's canBeDeleted; the sync deletes it
// from the sink once the sink's phase is terminal. A pod no longer in
// config is not deleted this way. Unlike the kubelet, the config pod's
// phase is not asked: a local source's copy of a pod carries the status
// it was applied with, not the one written. Without a lookup the sink is
// the only view of a deletion that came after the pod finished (the
// worker takes no update then), so every finished pod may be deletable.
func (m *StatusManager) canBeDeleted(uid types.UID, st *versionedPodStatus) bool {
	if !st.podIsFinished {
		return false
	}
	if m.lookup == nil {
		return true
	}
	pod, ok := m.lookup.Pod(uid)
	return ok && pod.DeletionTimestamp != nil && !IsMirrorPod(pod)
}

// needsReconcile compares the config view of the pod's status with the
// cache, ignoring what normalisation removes.
func (m *StatusManager) needsReconcile(uid types.UID, st *versionedPodStatus) bool {
	if m.lookup == nil {
		return false
	}
	pod, ok := m.lookup.Pod(uid)
	if !ok {
		return false
	}
	if IsStaticPod(pod) {
		if pod, ok = m.lookup.MirrorPod(pod); !ok {
			return false
		}
	}
	api := *pod.Status.DeepCopy()
	normalizeStatus(pod, &api)
	return !apiequality.Semantic.DeepEqual(mergePodStatus(api, st.status, true), api)
}

func (m *StatusManager) syncPod(ctx context.Context, t syncTarget) {
	log := m.log.With("pod", fullName(t.name, t.namespace), "uid", t.uid)
	pod, err := m.sink.Get(ctx, t.namespace, t.name)
	switch {
	case errors.Is(err, ErrNotFound):
		return
	case err != nil:
		log.Info("reading pod from the status sink", "err", err)
		return
	}
	defer m.sink.Forget(pod.UID)
	if pod.UID != t.sinkUID {
		if !t.mirror {
			m.mu.Lock()
			delete(m.statuses, t.uid)
			m.mu.Unlock()
		}
		return
	}
	could := true
	if m.pods != nil {
		could = m.pods.CouldHaveRunningContainers(t.uid)
	}
	api := *pod.Status.DeepCopy()
	normalizeStatus(pod, &api)
	merged := mergePodStatus(api, t.st.status, could)
	if !apiequality.Semantic.DeepEqual(api, merged) {
		if err := m.sink.Put(ctx, t.namespace, t.name, t.sinkUID, merged); err != nil {
			if errors.Is(err, ErrUIDMismatch) && !t.mirror {
				m.mu.Lock()
				delete(m.statuses, t.uid)
				m.mu.Unlock()
			}
			log.Info("writing pod status", "err", err)
			return
		}
	}
	if m.metrics != nil && !t.st.at.IsZero() {
		m.metrics.PodStatusSyncDuration.Observe(m.clock.Now().Sub(t.st.at.Time).Seconds())
	}
	m.apiVersions[t.sinkUID] = t.st.version
	m.mu.Lock()
	if cur, ok := m.statuses[t.uid]; ok && cur.version == t.st.version {
		cur.at = metav1.Time{}
	}
	m.mu.Unlock()
	if t.mirror || pod.DeletionTimestamp == nil || !t.st.podIsFinished || !isTerminalPhase(merged.Phase) || anyRunning(merged) {
		return
	}
	if err := m.sink.Delete(ctx, t.namespace, t.name, t.sinkUID); err != nil {
		log.Info("deleting finished pod", "err", err)
		return
	}
	m.mu.Lock()
	delete(m.statuses, t.uid)
	m.mu.Unlock()
}

func anyRunning(s v1.PodStatus) bool {
	for _, l := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for i := range l {
			if isRunningState(&l[i]) {
				return true
			}
		}
	}
	return false
}

// mergePodStatus merges the cached status into the sink's: conditions the
// agent does not own are kept; a terminal phase is delayed while a
// container could run and never changes once reached; a terminal phase
// forces Ready and ContainersReady to False, with the kubelet's reason
// PodCompleted or PodFailed.
func mergePodStatus(api, local v1.PodStatus, couldHaveRunning bool) v1.PodStatus {
	out := *local.DeepCopy()
	var conds []v1.PodCondition
	for _, c := range api.Conditions {
		if !kubeletConditions[c.Type] {
			conds = append(conds, c)
		}
	}
	transitioning := isTerminalPhase(local.Phase) && !isTerminalPhase(api.Phase)
	for _, c := range local.Conditions {
		if c.Type == v1.DisruptionTarget && !(transitioning && !couldHaveRunning) {
			continue
		}
		if kubeletConditions[c.Type] {
			conds = append(conds, c)
		}
	}
	if !(transitioning && !couldHaveRunning) {
		if dt := findCondition(api.Conditions, v1.DisruptionTarget); dt != nil {
			conds = append(conds, *dt)
		}
	}
	out.Conditions = conds
	sortConditions(out.Conditions)
	switch {
	case isTerminalPhase(api.Phase):
		out.Phase, out.Reason, out.Message = api.Phase, api.Reason, api.Message
	case transitioning && couldHaveRunning:
		out.Phase, out.Reason, out.Message = api.Phase, api.Reason, api.Message
	}
	if isTerminalPhase(out.Phase) {
		for _, t := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
			c := findCondition(out.Conditions, t)
			if c == nil {
				continue
			}
			if c.Status != v1.ConditionFalse || c.Reason != terminalReadyReason(out.Phase) {
				c.Status, c.Reason, c.Message = v1.ConditionFalse, terminalReadyReason(out.Phase), ""
			}
		}
	}
	return out
}

// Run writes statuses until ctx ends: a partial batch on every doorbell and
// a full batch every StatusSyncPeriod.
func (m *StatusManager) Run(ctx context.Context) {
	full := m.clock.After(StatusSyncPeriod)
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.doorbell:
			m.SyncBatch(ctx, false)
		case <-full:
			m.SyncBatch(ctx, true)
			full = m.clock.After(StatusSyncPeriod)
		}
	}
}
