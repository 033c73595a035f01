package node

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/state"
	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/sources"
)

// A pod that finished stays finished across a restart of the host, with
// the container statuses it finished with, whatever the runtime still
// holds of it. The kubelet gets this from the API server, whose pods carry
// their last status; podhost's config pods carry none, so the statuses the
// state database held at start are put on them (finishedPods.restore), and
// finishedSyncer keeps the runtime's view (which may have lost the
// containers: exit 137) from replacing them.

// finishedPods are the statuses the state database held at start, by UID.
// It is read-only after loadFinishedPods, so safe for concurrent use.
type finishedPods struct {
	stored map[types.UID]v1.PodStatus
}

// loadFinishedPods reads the stored statuses. It runs before any source
// is read, after a node shutdown's pods were reset to Pending.
func loadFinishedPods(ctx context.Context, store *state.Store) (*finishedPods, error) {
	recs, err := store.List(ctx)
	if err != nil {
		return &finishedPods{}, fmt.Errorf("reading the pods' last statuses: %w", err)
	}
	f := &finishedPods{stored: make(map[types.UID]v1.PodStatus, len(recs))}
	for _, r := range recs {
		f.stored[r.UID] = r.Status
	}
	return f, nil
}

// restore returns d with every pod that had finished before the restart
// carrying its stored status with its terminal phase. The pod worker then
// treats it as finished from the start, as a pod from an API server.
func (f *finishedPods) restore(d sources.Desired) sources.Desired {
	if f == nil || len(f.stored) == 0 {
		return d
	}
	pods := make([]sources.Pod, len(d.Pods))
	copy(pods, d.Pods)
	for i, p := range pods {
		if st, ok := f.status(p.Pod); ok {
			pod := p.Pod.DeepCopy()
			pod.Status = st
			pods[i].Pod = pod
		}
	}
	d.Pods = pods
	return d
}

// status returns the stored status of a pod that had finished before the
// restart, with its terminal phase.
func (f *finishedPods) status(pod *v1.Pod) (v1.PodStatus, bool) {
	if f == nil {
		return v1.PodStatus{}, false
	}
	stored, ok := f.stored[pod.UID]
	if !ok {
		return v1.PodStatus{}, false
	}
	phase, ok := finishedPhase(pod, stored)
	if !ok {
		return v1.PodStatus{}, false
	}
	st := *stored.DeepCopy()
	st.Phase = phase
	return st, true
}

// finishedPhase tells from a stored status whether the pod had finished,
// and in which phase. A terminal phase says so. So do container statuses
// that leave nothing to run, even when the host stopped before it could
// write the phase (it writes it only once the pod worker is done): every
// container terminated under restartPolicy Never, or OnFailure with exit
// 0, or a deleted pod with every container terminated. The rules are the
// lifecycle's own: the stored containers are fed to GeneratePodStatus as
// a runtime that holds them as they were.
func finishedPhase(pod *v1.Pod, stored v1.PodStatus) (v1.PodPhase, bool) {
	if isTerminal(stored.Phase) {
		return stored.Phase, true
	}
	rs := &lifecycle.PodStatus{ID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	allTerminated := len(pod.Spec.Containers) > 0
	terminated := map[string]bool{}
	for _, list := range [][]v1.ContainerStatus{stored.InitContainerStatuses, stored.ContainerStatuses} {
		for _, c := range list {
			cs := lifecycle.ContainerStatus{ID: c.ContainerID, Name: c.Name, RestartCount: c.RestartCount}
			switch {
			case c.State.Terminated != nil:
				t := c.State.Terminated
				terminated[c.Name] = true
				cs.State, cs.StartedAt, cs.FinishedAt = lifecycle.ContainerExited, t.StartedAt.Time, t.FinishedAt.Time
				cs.ExitCode, cs.Reason, cs.Message = t.ExitCode, t.Reason, t.Message
			case c.State.Running != nil:
				cs.State, cs.StartedAt = lifecycle.ContainerRunning, c.State.Running.StartedAt.Time
			default:
				continue
			}
			rs.ContainerStatuses = append(rs.ContainerStatuses, cs)
		}
	}
	for _, c := range pod.Spec.Containers {
		allTerminated = allTerminated && terminated[c.Name]
	}
	gen := lifecycle.GeneratePodStatus(pod, rs, stored, pod.DeletionTimestamp != nil && allTerminated, nil)
	return gen.Phase, isTerminal(gen.Phase)
}

func isTerminal(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

// podStatuses is what finishedSyncer needs of the status manager.
type podStatuses interface {
	SetPodStatus(pod *v1.Pod, status v1.PodStatus)
	TerminatePod(pod *v1.Pod)
}

// podKiller is what finishedSyncer needs of the runtime.
type podKiller interface {
	KillPod(ctx context.Context, pod *v1.Pod, running *lifecycle.RunningPod, gracePeriod int64) error
}

// finishedSyncer syncs a pod that had finished before the restart: it
// starts nothing, stops whatever the runtime still runs of it, and reports
// its stored status, never the runtime's. Other pods go to the PodSyncer.
type finishedSyncer struct {
	lifecycle.PodSyncer
	finished *finishedPods
	status   podStatuses
	runtime  podKiller
}

func (s *finishedSyncer) SyncPod(ctx context.Context, updateType lifecycle.UpdateType, pod, mirror *v1.Pod, status *lifecycle.PodStatus) (bool, error) {
	st, ok := s.finished.status(pod)
	if !ok {
		return s.PodSyncer.SyncPod(ctx, updateType, pod, mirror, status)
	}
	s.status.SetPodStatus(pod, st)
	return true, nil
}

func (s *finishedSyncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, status *lifecycle.PodStatus, gracePeriod *int64, statusFn func(*v1.PodStatus)) error {
	st, ok := s.finished.status(pod)
	if !ok {
		return s.PodSyncer.SyncTerminatingPod(ctx, pod, status, gracePeriod, statusFn)
	}
	if err := s.kill(ctx, pod, gracePeriod); err != nil {
		return err
	}
	if statusFn != nil {
		statusFn(&st)
	}
	s.status.SetPodStatus(pod, st)
	return nil
}

func (s *finishedSyncer) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, status *lifecycle.PodStatus) error {
	st, ok := s.finished.status(pod)
	if !ok {
		return s.PodSyncer.SyncTerminatedPod(ctx, pod, status)
	}
	// The worker may have found the pod finished before the runtime was
	// first listed: make sure nothing of it runs.
	if err := s.kill(ctx, pod, nil); err != nil {
		return err
	}
	s.status.SetPodStatus(pod, st)
	s.status.TerminatePod(pod)
	return nil
}

func (s *finishedSyncer) kill(ctx context.Context, pod *v1.Pod, gracePeriod *int64) error {
	if err := s.runtime.KillPod(ctx, pod, nil, lifecycle.GracePeriod(pod, gracePeriod)); err != nil {
		return fmt.Errorf("stopping what runs of finished pod %s: %w", lifecycle.PodFullName(pod), err)
	}
	return nil
}
