package node

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
)

func exited(name string, code int32) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, ContainerID: "containerd://" + name, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		ExitCode: code, Reason: "Completed", StartedAt: metav1.NewTime(time.Unix(10, 0)), FinishedAt: metav1.NewTime(time.Unix(20, 0)),
	}}}
}

func runningStatus(name string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(10, 0))}}}
}

func withPolicy(p *v1.Pod, policy v1.RestartPolicy) *v1.Pod {
	p = p.DeepCopy()
	p.Spec.RestartPolicy = policy
	return p
}

func TestFinishedPhase(t *testing.T) {
	two := pod("1", "a")
	two.Spec.Containers = append(two.Spec.Containers, v1.Container{Name: "d", Image: "a"})
	for _, tc := range []struct {
		name      string
		pod       *v1.Pod
		stored    v1.PodStatus
		want      v1.PodPhase
		wantFound bool
	}{
		{"a terminal phase", withPolicy(pod("1", "a"), v1.RestartPolicyAlways),
			v1.PodStatus{Phase: v1.PodFailed, ContainerStatuses: []v1.ContainerStatus{exited("c", 1)}}, v1.PodFailed, true},
		{"never, exited 0, phase not yet written", withPolicy(pod("1", "a"), v1.RestartPolicyNever),
			v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{exited("c", 0)}}, v1.PodSucceeded, true},
		{"never, exited 3", withPolicy(pod("1", "a"), v1.RestartPolicyNever),
			v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{exited("c", 3)}}, v1.PodFailed, true},
		{"never, one container still running", withPolicy(two, v1.RestartPolicyNever),
			v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{exited("c", 0), runningStatus("d")}}, "", false},
		{"never, one container without a status", withPolicy(two, v1.RestartPolicyNever),
			v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{exited("c", 0)}}, "", false},
		{"on failure, exited 0", withPolicy(pod("1", "a"), v1.RestartPolicyOnFailure),
			v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{exited("c", 0)}}, v1.PodSucceeded, true},
		{"on failure, exited 1 restarts", withPolicy(pod("1", "a"), v1.RestartPolicyOnFailure),
			v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{exited("c", 1)}}, "", false},
		{"always, exited restarts", withPolicy(pod("1", "a"), v1.RestartPolicyAlways),
			v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{exited("c", 0)}}, "", false},
		{"always, deleted and exited", deleted(withPolicy(pod("1", "a"), v1.RestartPolicyAlways), 30),
			v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{exited("c", 0)}}, v1.PodSucceeded, true},
		{"always, deleted, still running", deleted(withPolicy(pod("1", "a"), v1.RestartPolicyAlways), 30),
			v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{runningStatus("c")}}, "", false},
		{"pending after a node shutdown", withPolicy(pod("1", "a"), v1.RestartPolicyNever), v1.PodStatus{Phase: v1.PodPending}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found := finishedPhase(tc.pod, tc.stored)
			if found != tc.wantFound || (found && got != tc.want) {
				t.Errorf("finishedPhase = %q, %t; want %q, %t", got, found, tc.want, tc.wantFound)
			}
		})
	}
}

func TestFinishedPodsRestore(t *testing.T) {
	done := withPolicy(pod("1", "a"), v1.RestartPolicyNever)
	steady := withPolicy(pod("2", "a"), v1.RestartPolicyAlways)
	fresh := withPolicy(pod("3", "a"), v1.RestartPolicyNever)
	f := &finishedPods{stored: map[types.UID]v1.PodStatus{
		"1": {Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{exited("c", 0)}},
		"2": {Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{runningStatus("c")}},
	}}
	d := f.restore(desired(true, done, steady, fresh))
	if got := d.Pods[0].Pod.Status; got.Phase != v1.PodSucceeded || len(got.ContainerStatuses) != 1 || got.ContainerStatuses[0].State.Terminated.ExitCode != 0 {
		t.Errorf("finished pod restored with %+v; want Succeeded with its exited container", got)
	}
	if done.Status.Phase != "" {
		t.Errorf("restore changed the source's pod: %+v", done.Status)
	}
	for _, p := range d.Pods[1:] {
		if p.Pod.Status.Phase != "" {
			t.Errorf("pod %s that had not finished got status %+v", p.Pod.UID, p.Pod.Status)
		}
	}
}

// innerSyncer records which calls reached the lifecycle's syncer.
type innerSyncer struct {
	lifecycle.PodSyncer
	calls []string
}

func (s *innerSyncer) SyncPod(context.Context, lifecycle.UpdateType, *v1.Pod, *v1.Pod, *lifecycle.PodStatus) (bool, error) {
	s.calls = append(s.calls, "SyncPod")
	return false, nil
}

func (s *innerSyncer) SyncTerminatingPod(context.Context, *v1.Pod, *lifecycle.PodStatus, *int64, func(*v1.PodStatus)) error {
	s.calls = append(s.calls, "SyncTerminatingPod")
	return nil
}

func (s *innerSyncer) SyncTerminatedPod(context.Context, *v1.Pod, *lifecycle.PodStatus) error {
	s.calls = append(s.calls, "SyncTerminatedPod")
	return nil
}

type recordingKiller struct{ kills []int64 }

func (k *recordingKiller) KillPod(_ context.Context, _ *v1.Pod, _ *lifecycle.RunningPod, grace int64) error {
	k.kills = append(k.kills, grace)
	return nil
}

// TestFinishedSyncer runs the worker's calls for a pod that finished before
// the restart against a runtime that lost it (an empty status): nothing
// starts, what may run is killed, and the status manager ends with the
// stored container statuses, not a lost container's exit 137.
func TestFinishedSyncer(t *testing.T) {
	done := withPolicy(pod("1", "a"), v1.RestartPolicyNever)
	other := withPolicy(pod("2", "a"), v1.RestartPolicyNever)
	stored := v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{exited("c", 0)}}
	empty := func(p *v1.Pod) *lifecycle.PodStatus { return &lifecycle.PodStatus{ID: p.UID} }
	grace := int64(5)
	for _, tc := range []struct {
		name      string
		pod       *v1.Pod
		call      func(ctx context.Context, s *finishedSyncer, p *v1.Pod) error
		wantInner []string
		wantKills []int64
	}{
		{"sync reports it terminal, starts nothing", done, func(ctx context.Context, s *finishedSyncer, p *v1.Pod) error {
			terminal, err := s.SyncPod(ctx, lifecycle.UpdateCreate, p, nil, empty(p))
			if err == nil && !terminal {
				t.Error("SyncPod did not report the finished pod terminal")
			}
			return err
		}, nil, nil},
		{"terminating kills with the grace period", done, func(ctx context.Context, s *finishedSyncer, p *v1.Pod) error {
			return s.SyncTerminatingPod(ctx, p, empty(p), &grace, nil)
		}, nil, []int64{5}},
		{"terminated kills what may run and keeps the statuses", done, func(ctx context.Context, s *finishedSyncer, p *v1.Pod) error {
			return s.SyncTerminatedPod(ctx, p, empty(p))
		}, nil, []int64{v1.DefaultTerminationGracePeriodSeconds}},
		{"another pod goes to the lifecycle", other, func(ctx context.Context, s *finishedSyncer, p *v1.Pod) error {
			if _, err := s.SyncPod(ctx, lifecycle.UpdateCreate, p, nil, empty(p)); err != nil {
				return err
			}
			if err := s.SyncTerminatingPod(ctx, p, empty(p), nil, nil); err != nil {
				return err
			}
			return s.SyncTerminatedPod(ctx, p, empty(p))
		}, []string{"SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sm := lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: lifecycle.SystemClock{}})
			inner, killer := &innerSyncer{}, &recordingKiller{}
			s := &finishedSyncer{PodSyncer: inner, finished: &finishedPods{stored: map[types.UID]v1.PodStatus{"1": stored}},
				status: sm, runtime: killer}
			p := s.finished.restore(desired(true, tc.pod)).Pods[0].Pod
			if err := tc.call(t.Context(), s, p); err != nil {
				t.Fatal(err)
			}
			if strings.Join(inner.calls, ",") != strings.Join(tc.wantInner, ",") {
				t.Errorf("lifecycle syncer calls = %v; want %v", inner.calls, tc.wantInner)
			}
			if len(killer.kills) != len(tc.wantKills) || (len(tc.wantKills) > 0 && killer.kills[0] != tc.wantKills[0]) {
				t.Errorf("kills with grace %v; want %v", killer.kills, tc.wantKills)
			}
			if tc.pod != done {
				return
			}
			st, ok := sm.PodStatus(p.UID)
			if !ok {
				t.Fatal("no status set")
			}
			c := st.ContainerStatuses
			if st.Phase != v1.PodSucceeded || len(c) != 1 || c[0].State.Terminated == nil || c[0].State.Terminated.ExitCode != 0 ||
				c[0].ContainerID != "containerd://c" || !c[0].State.Terminated.FinishedAt.Equal(&stored.ContainerStatuses[0].State.Terminated.FinishedAt) {
				t.Errorf("status = %+v; want Succeeded with the stored container status", st)
			}
		})
	}
}
