package eviction

import (
	"context"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// EventThresholdMet is the reason of the node's event when a threshold is
// met, the kubelet's.
const EventThresholdMet = "EvictionThresholdMet"

// checkPressure measures the signals, keeps the pressure conditions and
// evicts at most one of active for the first threshold met.
func (m *Manager) checkPressure(ctx context.Context, rt *runtimev1.ListStatsResponse, active []*v1.Pod, layers map[types.UID]map[string]uint64, dedicated bool) {
	obs, err := m.cfg.Signals(rt)
	if err != nil {
		// What was measured still counts; a signal not measured meets
		// no threshold.
		m.logErr("measuring the node's pressure signals", err)
	}
	met := ThresholdsMet(m.cfg.Thresholds, obs)
	conds := Conditions(met, m.lastObserved, m.cfg.Now(), m.cfg.TransitionPeriod)
	m.mu.Lock()
	m.conditions = conds
	m.mu.Unlock()
	if len(met) == 0 {
		return
	}
	t := met[0]
	res := signalResource[t.Signal]
	o := obs[t.Signal]
	m.cfg.Logger.Warn("eviction threshold met", "signal", t.Signal, "available", o.Available, "capacity", o.Capacity, "threshold", t.quantity(o.Capacity))
	if m.cfg.NodeEvent != nil {
		m.cfg.NodeEvent(v1.EventTypeWarning, EventThresholdMet, fmt.Sprintf("Attempting to reclaim %s", res))
	}
	if m.waitingForCleanup(o) {
		return
	}
	var usage UsageFunc
	if res == v1.ResourceMemory {
		usage = memoryUsage(rt)
	} else {
		usage = m.diskUsage(ctx, active, layers)
	}
	pod, e, ok := DecidePressure(met, obs, dedicated, active, usage)
	if !ok {
		if len(active) > 0 {
			m.cfg.Logger.Error("eviction threshold met and no pod may be evicted", "signal", t.Signal)
		}
		return
	}
	m.evicted[pod.UID] = true
	if m.cfg.Cleaned != nil {
		m.reclaiming = &reclaim{uid: pod.UID, evictedAt: m.cfg.Now()}
	}
	m.cfg.Logger.Info("evicting pod", "pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID, "signal", e.Signal, "message", e.Message)
	m.cfg.Evict(pod, e)
}

// PodCleanupTimeout bounds the wait for an evicted pod's cleanup, the
// kubelet's.
const PodCleanupTimeout = 30 * time.Second

// reclaim is a node-pressure eviction whose cleanup the manager waits
// for: cleanedAt is when the manager first saw the pod cleaned up.
type reclaim struct {
	uid                  types.UID
	evictedAt, cleanedAt time.Time
}

// waitingForCleanup reports whether the last node-pressure eviction has
// yet to show in o, the observation of the threshold met: the evicted pod
// is not cleaned up, or o was measured before it was (a reading taken
// while its memory or disk was still in use). It stops waiting after
// PodCleanupTimeout.
func (m *Manager) waitingForCleanup(o Observation) bool {
	r := m.reclaiming
	if r == nil {
		return false
	}
	now := m.cfg.Now()
	if now.Sub(r.evictedAt) >= PodCleanupTimeout {
		m.reclaiming = nil
		return false
	}
	if r.cleanedAt.IsZero() {
		if !m.cfg.Cleaned(r.uid) {
			m.cfg.Logger.Debug("waiting for the evicted pod's cleanup", "uid", r.uid)
			return true
		}
		r.cleanedAt = now
	}
	if !o.At.IsZero() && o.At.Before(r.cleanedAt) {
		m.cfg.Logger.Debug("waiting for a reading taken after the evicted pod's cleanup", "uid", r.uid)
		return true
	}
	m.reclaiming = nil
	return false
}

// Pressure says whether the node has memory and disk pressure, as the last
// check found them (with the transition period).
func (m *Manager) Pressure() (memory, disk bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Contains(m.conditions, v1.NodeMemoryPressure), slices.Contains(m.conditions, v1.NodeDiskPressure)
}

// memoryUsage is each pod's working set from the runtime's stats, by
// sandbox, and its containers' (the newest of each name).
func memoryUsage(rt *runtimev1.ListStatsResponse) UsageFunc {
	byUID := map[types.UID]PodUsage{}
	sandboxes := map[string]types.UID{}
	for _, sb := range rt.GetSandboxes() {
		uid := types.UID(sb.GetMetadata().GetUid())
		sandboxes[sb.GetSandboxId()] = uid
		if mem := sb.GetMemory(); mem != nil {
			byUID[uid] = PodUsage{Memory: mem.GetWorkingSetBytes(), Containers: map[string]ContainerPressureUsage{}}
		}
	}
	created := map[string]int64{}
	for _, c := range rt.GetContainers() {
		u, ok := byUID[sandboxes[c.GetSandboxId()]]
		if !ok || c.GetMemory() == nil {
			continue
		}
		key := c.GetSandboxId() + "/" + c.GetMetadata().GetName()
		if at, seen := created[key]; seen && at > c.GetCreatedAt() {
			continue
		}
		created[key] = c.GetCreatedAt()
		u.Containers[c.GetMetadata().GetName()] = ContainerPressureUsage{Memory: c.GetMemory().GetWorkingSetBytes()}
	}
	return func(pod *v1.Pod) (PodUsage, bool) {
		u, ok := byUID[pod.UID]
		return u, ok
	}
}

// diskUsage measures each pod's local storage (see Usage) once.
func (m *Manager) diskUsage(ctx context.Context, pods []*v1.Pod, layers map[types.UID]map[string]uint64) UsageFunc {
	byUID := map[types.UID]PodUsage{}
	for _, pod := range pods {
		u, err := measurePod(ctx, m.cfg.RootDir, pod, layers[pod.UID])
		if err != nil {
			m.logErr("measuring a pod's local storage", err, "pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID)
			continue
		}
		pu := PodUsage{Disk: total(pod, u), Containers: map[string]ContainerPressureUsage{}}
		for name, c := range u.Containers {
			pu.Layers += c.WritableLayer
			pu.Containers[name] = ContainerPressureUsage{Disk: c.WritableLayer + c.Logs}
		}
		byUID[pod.UID] = pu
	}
	return func(pod *v1.Pod) (PodUsage, bool) {
		u, ok := byUID[pod.UID]
		return u, ok
	}
}
