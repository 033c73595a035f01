package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// terminationState is what the syncer asks the pod worker.
type terminationState interface {
	IsPodTerminationRequested(uid types.UID) bool
}

// Syncer implements PodSyncer on a Runtime, Volumes and a StatusManager:
// the three phases of a pod with status reporting in between. The host
// supplies the Runtime (over the runtime plugin) and Volumes.
type Syncer struct {
	Runtime Runtime
	// Volumes may be nil (no volumes).
	Volumes Volumes
	Status  *StatusManager
	// Pods is the pod worker; it may be nil.
	Pods terminationState
	// Reasons may be nil.
	Reasons  *ReasonCache
	Recorder Recorder
	// Metrics may be nil. With Metrics, Clock must be set: the start
	// latencies are measured on it from the config.seen annotation.
	Metrics *Metrics
	Clock   Clock
	// Probes, when set, runs the pod's probes from its first SyncPod until
	// termination is requested.
	Probes PodProbes
	// Mirrors, when set, keeps a mirror pod in the API for each static pod.
	Mirrors MirrorPods
	// Logger may be nil.
	Logger *slog.Logger
	// HostIPs are the node's addresses, primary first: every status the
	// Syncer writes reports them as hostIP and hostIPs, and as the pod IPs
	// of a host-network pod (SetHostIPs). Empty: none are reported.
	HostIPs []string
}

// PodProbes starts and stops the probe workers of pods; *ProbeManager
// implements it.
type PodProbes interface {
	AddPod(pod *v1.Pod)
	StopPod(uid types.UID)
	RemovePod(uid types.UID)
}

// generate is GeneratePodStatus with the node's addresses set.
func (s *Syncer) generate(pod *v1.Pod, rs *PodStatus, cached v1.PodStatus, podIsTerminal bool) v1.PodStatus {
	st := GeneratePodStatus(pod, rs, cached, podIsTerminal, s.Reasons)
	SetHostIPs(pod, &st, s.HostIPs)
	return st
}

func (s *Syncer) cached(uid types.UID) v1.PodStatus {
	st, _ := s.Status.PodStatus(uid)
	return st
}

// SyncPod writes the generated status, then mounts volumes and lets the
// runtime start what the spec asks for. It reports a terminal pod without
// setting anything up, and starts nothing once termination was requested.
func (s *Syncer) SyncPod(ctx context.Context, updateType UpdateType, pod, mirror *v1.Pod, status *PodStatus) (bool, error) {
	firstSeen := time.Time{}
	if s.Metrics != nil && s.Clock != nil {
		firstSeen = PodFirstSeen(pod)
	}
	if updateType == UpdateCreate {
		s.observe(s.Metrics.observeWorkerStart, firstSeen)
	}
	prev, hadStatus := s.Status.PodStatus(pod.UID)
	api := s.generate(pod, status, prev, false)
	s.failPastDeadline(pod, &api)
	if isTerminalPhase(api.Phase) {
		s.Status.SetPodStatus(pod, api)
		return true, nil
	}
	if api.Phase == v1.PodRunning && (!hadStatus || prev.Phase == v1.PodPending || prev.Phase == "") {
		s.observe(s.Metrics.observePodStart, firstSeen)
	}
	s.Status.SetPodStatus(pod, api)
	if err := s.mayStart(ctx, pod); err != nil {
		return false, err
	}
	s.syncMirror(ctx, pod, mirror)
	if s.Volumes != nil {
		if err := s.Volumes.MountPod(ctx, pod); err != nil {
			return false, fmt.Errorf("mounting volumes of %s: %w", PodFullName(pod), err)
		}
	}
	// Mounting may take long: a termination requested meanwhile must not
	// let the runtime start anything.
	if err := s.mayStart(ctx, pod); err != nil {
		return false, err
	}
	if s.Probes != nil {
		s.Probes.AddPod(pod)
	}
	if err := s.Runtime.SyncPod(ctx, pod, status); err != nil {
		return false, fmt.Errorf("syncing pod %s: %w", PodFullName(pod), err)
	}
	return false, nil
}

// mayStart refuses to go on once termination of the pod was requested or
// the sync was cancelled. The runtime still checks ctx before each start.
func (s *Syncer) mayStart(ctx context.Context, pod *v1.Pod) error {
	if s.Pods != nil && s.Pods.IsPodTerminationRequested(pod.UID) {
		return fmt.Errorf("syncing pod %s: %w", PodFullName(pod), ErrTerminationRequested)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("syncing pod %s: %w", PodFullName(pod), err)
	}
	return nil
}

// observe calls record with the first-seen time and now, when both are known.
func (s *Syncer) observe(record func(firstSeen, now time.Time), firstSeen time.Time) {
	if firstSeen.IsZero() {
		return
	}
	record(firstSeen, s.Clock.Now())
}

// SyncTerminatingPod reports the terminating status, kills the pod within
// the grace period, checks that nothing runs and reports the stopped
// status with the exit codes captured.
func (s *Syncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, status *PodStatus, gracePeriod *int64, statusFn func(*v1.PodStatus)) error {
	if s.Probes != nil {
		s.Probes.StopPod(pod.UID)
	}
	api := s.generate(pod, status, s.cached(pod.UID), false)
	if statusFn != nil {
		statusFn(&api)
	}
	s.Status.SetPodStatus(pod, api)
	if err := s.Runtime.KillPod(ctx, pod, nil, GracePeriod(pod, gracePeriod)); err != nil {
		if s.Recorder != nil {
			s.Recorder.Event(pod, EventWarning, "FailedToKillPod", err.Error())
		}
		return fmt.Errorf("killing pod %s: %w", PodFullName(pod), err)
	}
	stopped, err := s.Runtime.PodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		return fmt.Errorf("reading status of %s after kill: %w", PodFullName(pod), err)
	}
	for _, c := range stopped.ContainerStatuses {
		if c.State == ContainerRunning {
			return fmt.Errorf("pod %s: %w", PodFullName(pod), ErrContainersStillRunning)
		}
	}
	final := s.generate(pod, stopped, s.cached(pod.UID), true)
	if statusFn != nil {
		statusFn(&final)
	}
	s.Status.SetPodStatus(pod, final)
	return nil
}

// SyncTerminatingRuntimePod kills a pod without config with grace 1.
func (s *Syncer) SyncTerminatingRuntimePod(ctx context.Context, pod *RunningPod) error {
	if err := s.Runtime.KillPod(ctx, nil, pod, orphanKillGrace); err != nil {
		return fmt.Errorf("killing runtime pod %s: %w", pod.ID, err)
	}
	return nil
}

// SyncTerminatedPod writes the final status, waits for volumes to be
// unmounted and marks the status finished.
func (s *Syncer) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, status *PodStatus) error {
	if s.Probes != nil {
		s.Probes.RemovePod(pod.UID)
	}
	s.Status.SetPodStatus(pod, s.generate(pod, status, s.cached(pod.UID), true))
	if s.Volumes != nil {
		if err := s.Volumes.UnmountPod(ctx, pod); err != nil {
			return fmt.Errorf("unmounting volumes of %s: %w", PodFullName(pod), err)
		}
	}
	s.Status.TerminatePod(pod)
	return nil
}

var _ PodSyncer = (*Syncer)(nil)
