package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Housekeeping cadence and warning threshold.
const (
	HousekeepingPeriod  = 2 * time.Second
	housekeepingTooLong = time.Second
	orphanKillGrace     = int64(1)
)

// PodWorkerSet is the pod worker as housekeeping and config handlers use
// it. The driver (Workers) implements it.
type PodWorkerSet interface {
	UpdatePod(opts UpdatePodOptions)
	SyncKnownPods(desired []*v1.Pod) map[types.UID]PodWorkerSync
	IsPodKnownTerminated(uid types.UID) bool
	IsPodTerminationRequested(uid types.UID) bool
	IsPodForMirrorPodTerminatingByFullName(fullname string) bool
}

// PodDirs is the set of per-pod directories on disk.
type PodDirs interface {
	// List returns the UIDs that have a pod directory.
	List() ([]types.UID, error)
	// Remove deletes the directory of one pod. It must fail, and remove
	// nothing, while a volume of the pod is still mounted.
	Remove(uid types.UID) error
}

// MirrorPodDeleter deletes mirror pods from the API.
type MirrorPodDeleter interface {
	// DeleteMirrorPod deletes the mirror pod with a UID precondition. A
	// mirror that is already gone is not an error.
	DeleteMirrorPod(ctx context.Context, mirror *v1.Pod) error
}

// RuntimeLister lists the pods the runtime holds, fresh.
type RuntimeLister interface {
	ListPods(ctx context.Context) ([]*RunningPod, error)
}

// StatusKeeper is the part of the status manager housekeeping uses.
type StatusKeeper interface {
	// PodStatus returns the cached status of a pod.
	PodStatus(uid types.UID) (v1.PodStatus, bool)
	// RemoveOrphanedStatuses forgets every status whose UID is not kept.
	RemoveOrphanedStatuses(keep map[types.UID]struct{})
}

// Housekeeper performs one housekeeping pass: it reconciles the pod worker
// with config and with the runtime. It holds no state between passes.
type Housekeeper struct {
	Workers PodWorkerSet
	Runtime RuntimeLister
	// Status may be nil.
	Status StatusKeeper
	// Dirs may be nil: no pod directories are cleaned.
	Dirs PodDirs
	// Mirrors may be nil: orphaned mirror pods are left alone.
	Mirrors MirrorPodDeleter
	Metrics *Metrics
	Clock   Clock
	Logger  *slog.Logger
}

// Cleanup runs one pass over the config pods (mirror pods excluded) and the
// mirror pods. No config change may be delivered while it runs. Callers
// must skip passes until every config source has reported once.
//
// The steps follow docs/lifecycle.md, section 6: find orphaned mirror
// pods, SyncKnownPods, list the runtime (an error aborts the pass), drop
// the statuses of pods neither desired, mirrored nor known to the worker, remove orphaned pod directories, delete orphaned
// mirror pods, set the config gauges, re-create desired pods unknown to the
// worker, kill deleted terminal pods unknown to the worker, kill runtime
// pods unknown to the worker and set kubelet_working_pods. Probe and cgroup
// cleanup have no counterpart in podhost yet.
func (h *Housekeeper) Cleanup(ctx context.Context, config, mirrors []*v1.Pod) error {
	log := h.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := h.Clock.Now()
	orphanedMirrors := orphanedMirrorPods(config, mirrors)
	workingPods := h.Workers.SyncKnownPods(config)
	possiblyRunning := make(map[types.UID]struct{}, len(workingPods))
	for uid, s := range workingPods {
		if s.State != WorkTerminated {
			possiblyRunning[uid] = struct{}{}
		}
	}

	listed, err := h.Runtime.ListPods(ctx)
	if err != nil {
		return fmt.Errorf("listing runtime pods: %w", err)
	}
	running := listed[:0:0]
	for _, r := range listed {
		if r.IsRunning() {
			running = append(running, r)
		}
	}
	if h.Status != nil {
		// A pod that left the desired set keeps its status while its
		// worker is known (SyncKnownPods forgets an orphan only once it
		// finished): it is still served, and SyncTerminatedPod builds the
		// final status from it.
		keep := make(map[types.UID]struct{}, len(config)+len(mirrors)+len(workingPods))
		for _, p := range config {
			keep[p.UID] = struct{}{}
		}
		for _, p := range mirrors {
			keep[p.UID] = struct{}{}
		}
		for uid := range workingPods {
			keep[uid] = struct{}{}
		}
		h.Status.RemoveOrphanedStatuses(keep)
	}
	h.cleanupPodDirs(log, config, listed, possiblyRunning)
	h.deleteOrphanedMirrors(ctx, log, orphanedMirrors)

	active := h.activePods(config)
	h.recordConfigGauges(config, active, mirrors)

	for _, pod := range active {
		if _, ok := workingPods[pod.UID]; ok {
			continue
		}
		static := IsStaticPod(pod)
		log.Info("restarting pod unknown to the pod worker", "pod", PodFullName(pod), "uid", pod.UID)
		h.Workers.UpdatePod(UpdatePodOptions{UpdateType: UpdateCreate, Pod: pod, StartTime: h.Clock.Now()})
		workingPods[pod.UID] = PodWorkerSync{State: WorkSync, HasConfig: true, Static: static}
		if h.Metrics != nil {
			h.Metrics.RestartedPods.WithLabelValues(staticLabel(static)).Inc()
		}
	}

	inRuntime := make(map[types.UID]struct{}, len(running))
	for _, r := range running {
		inRuntime[r.ID] = struct{}{}
	}
	for _, pod := range config {
		if pod.DeletionTimestamp == nil || !h.isTerminal(pod) {
			continue
		}
		if _, ok := workingPods[pod.UID]; ok {
			continue
		}
		if _, ok := inRuntime[pod.UID]; ok {
			continue
		}
		h.Workers.UpdatePod(UpdatePodOptions{UpdateType: UpdateKill, Pod: pod})
	}

	for _, r := range running {
		if _, ok := workingPods[r.ID]; ok {
			continue
		}
		log.Info("killing runtime pod unknown to the pod worker", "pod", fullName(r.Name, r.Namespace), "uid", r.ID)
		grace := orphanKillGrace
		h.Workers.UpdatePod(UpdatePodOptions{
			UpdateType:     UpdateKill,
			RunningPod:     r,
			KillPodOptions: &KillPodOptions{GracePeriodOverride: &grace},
		})
		workingPods[r.ID] = PodWorkerSync{State: WorkTerminating, Orphan: true}
		if h.Metrics != nil {
			h.Metrics.OrphanedRuntimePods.Inc()
		}
	}

	for k, n := range h.Metrics.recordWorkingPods(countWorkingPods(workingPods)) {
		log.Warn("workers fit no kubelet_working_pods series; not counted",
			"lifecycle", k.lifecycle, "config", k.config, "static", k.static, "pods", n)
	}
	if d := h.Clock.Now().Sub(start); d > housekeepingTooLong {
		log.Warn("housekeeping took too long", "duration", d)
	}
	return nil
}

// orphanedMirrorPods returns the mirror pods whose static pod is not in
// config, matched by full name.
func orphanedMirrorPods(config, mirrors []*v1.Pod) []*v1.Pod {
	static := make(map[string]struct{}, len(config))
	for _, p := range config {
		if IsStaticPod(p) {
			static[PodFullName(p)] = struct{}{}
		}
	}
	var out []*v1.Pod
	for _, m := range mirrors {
		if _, ok := static[PodFullName(m)]; !ok {
			out = append(out, m)
		}
	}
	return out
}

// cleanupPodDirs removes the directories of pods that are not in config,
// not in the runtime and not possibly running. Errors are logged and the
// pass continues.
func (h *Housekeeper) cleanupPodDirs(log *slog.Logger, config []*v1.Pod, listed []*RunningPod, possiblyRunning map[types.UID]struct{}) {
	if h.Dirs == nil {
		return
	}
	uids, err := h.Dirs.List()
	if err != nil {
		log.Error("listing pod directories", "err", err)
		return
	}
	keep := make(map[types.UID]struct{}, len(config)+len(listed))
	for _, p := range config {
		keep[p.UID] = struct{}{}
	}
	for _, r := range listed {
		keep[r.ID] = struct{}{}
	}
	for _, uid := range uids {
		if _, ok := keep[uid]; ok {
			continue
		}
		if _, ok := possiblyRunning[uid]; ok {
			continue
		}
		if err := h.Dirs.Remove(uid); err != nil {
			log.Error("removing orphaned pod directory", "uid", uid, "err", err)
		}
	}
}

// deleteOrphanedMirrors deletes mirror pods without a static pod, except
// those whose static pod is still terminating. Errors are logged.
func (h *Housekeeper) deleteOrphanedMirrors(ctx context.Context, log *slog.Logger, orphaned []*v1.Pod) {
	if h.Mirrors == nil {
		return
	}
	for _, m := range orphaned {
		name := PodFullName(m)
		if h.Workers.IsPodForMirrorPodTerminatingByFullName(name) {
			log.Debug("keeping mirror pod of a terminating static pod", "pod", name)
			continue
		}
		if err := h.Mirrors.DeleteMirrorPod(ctx, m); err != nil {
			log.Error("deleting orphaned mirror pod", "pod", name, "uid", m.UID, "err", err)
		}
	}
}

// countWorkingPods groups the workers into kubelet_working_pods series.
func countWorkingPods(working map[types.UID]PodWorkerSync) map[workingPodsKey]int {
	counts := make(map[workingPodsKey]int, 15)
	for _, s := range working {
		k := workingPodsKey{lifecycle: s.State.String(), static: staticLabel(s.Static)}
		switch {
		case s.Orphan && !s.HasConfig:
			k.config, k.static = configRuntimeOnly, staticUnknown
		case s.Orphan:
			k.config = configOrphan
		default:
			k.config = configDesired
		}
		counts[k]++
	}
	return counts
}

// isTerminal reports a terminal phase in the API or in the status manager
// (which covers pods rejected at admission).
func (h *Housekeeper) isTerminal(pod *v1.Pod) bool {
	if isTerminalPhase(pod.Status.Phase) {
		return true
	}
	if h.Status != nil {
		if st, ok := h.Status.PodStatus(pod.UID); ok && isTerminalPhase(st.Phase) {
			return true
		}
	}
	return false
}

// activePods filters out pods that hold no resources: known terminated, or
// terminal without a termination request.
func (h *Housekeeper) activePods(config []*v1.Pod) []*v1.Pod {
	return FilterActivePods(config, h.Workers, h.isTerminal)
}

// TerminationState is what FilterActivePods asks the pod worker.
type TerminationState interface {
	IsPodKnownTerminated(uid types.UID) bool
	IsPodTerminationRequested(uid types.UID) bool
}

// FilterActivePods returns the config pods that admission must count: not
// known terminated, and not terminal unless still terminating.
func FilterActivePods(config []*v1.Pod, w TerminationState, isTerminal func(*v1.Pod) bool) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(config))
	for _, pod := range config {
		if w.IsPodKnownTerminated(pod.UID) {
			continue
		}
		if isTerminal(pod) && !w.IsPodTerminationRequested(pod.UID) {
			continue
		}
		out = append(out, pod)
	}
	return out
}

func (h *Housekeeper) recordConfigGauges(config, active, mirrors []*v1.Pod) {
	m := h.Metrics
	if m == nil {
		return
	}
	count := func(pods []*v1.Pod) (regular, static int) {
		for _, p := range pods {
			if IsStaticPod(p) {
				static++
			} else {
				regular++
			}
		}
		return regular, static
	}
	r, s := count(config)
	m.DesiredPods.WithLabelValues("").Set(float64(r))
	m.DesiredPods.WithLabelValues("true").Set(float64(s))
	r, s = count(active)
	m.ActivePods.WithLabelValues("").Set(float64(r))
	m.ActivePods.WithLabelValues("true").Set(float64(s))
	m.MirrorPods.Set(float64(len(mirrors)))
}
