package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// mountHook is a Volumes whose MountPod runs a callback, standing in for a
// mount that takes long enough for a kill to arrive.
type mountHook struct{ onMount func() }

func (m mountHook) MountPod(context.Context, *v1.Pod) error {
	if m.onMount != nil {
		m.onMount()
	}
	return nil
}

func (mountHook) UnmountPod(context.Context, *v1.Pod) error { return nil }

// TestSyncerStartsNothingOnceTerminating checks that SyncPod hands the
// runtime nothing to start once termination was requested, whether the
// request came before the sync or while its volumes were mounting, and
// that the refusal reads as a cancellation, not a failure (A16).
func TestSyncerStartsNothingOnceTerminating(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, mount bool
		wantStarts    int
	}{
		{"not terminating: the container starts", false, false, 1},
		{"termination requested before the sync", true, false, 0},
		{"termination requested while volumes mount", false, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newStatusEnv()
			pod := apiPod("1", "p")
			pod.Spec.Containers = pod.Spec.Containers[:1]
			e.state.terminating["1"] = tc.before
			rt := lifecycletest.NewFakeRuntime()
			s := &lifecycle.Syncer{Runtime: rt, Status: e.m, Pods: e.state,
				Volumes: mountHook{onMount: func() { e.state.terminating["1"] = e.state.terminating["1"] || tc.mount }}}
			_, err := s.SyncPod(t.Context(), lifecycle.UpdateCreate, pod, nil, &lifecycle.PodStatus{ID: "1"})
			starts := 0
			for _, c := range rt.Calls() {
				if len(c) > 6 && c[:6] == "start " {
					starts++
				}
			}
			if starts != tc.wantStarts {
				t.Errorf("%d container starts; want %d", starts, tc.wantStarts)
			}
			refused := tc.wantStarts == 0
			if refused != errors.Is(err, lifecycle.ErrTerminationRequested) {
				t.Errorf("SyncPod error %v; want ErrTerminationRequested %t", err, refused)
			}
			if refused && !errors.Is(err, context.Canceled) {
				t.Errorf("SyncPod error %v does not wrap context.Canceled: it would be backed off as a failure", err)
			}
		})
	}
}

// TestSyncerReportsHostIPs checks that every status the Syncer writes, from
// the first sync to the final one, carries the node's addresses as the
// pod's host IPs, and a host-network pod's as its pod IPs: the runtime
// reports none for it, and the stopped pod's status comes from the
// runtime, not from the caller.
func TestSyncerReportsHostIPs(t *testing.T) {
	nodeIPs := []string{"192.0.2.7", "2001:db8::7"}
	for _, step := range []struct {
		name string
		sync func(t *testing.T, s *lifecycle.Syncer, pod *v1.Pod)
	}{
		{"SyncPod", func(t *testing.T, s *lifecycle.Syncer, pod *v1.Pod) {
			if _, err := s.SyncPod(t.Context(), lifecycle.UpdateCreate, pod, nil, &lifecycle.PodStatus{ID: pod.UID}); err != nil {
				t.Fatal(err)
			}
		}},
		{"SyncTerminatingPod", func(t *testing.T, s *lifecycle.Syncer, pod *v1.Pod) {
			if err := s.SyncTerminatingPod(t.Context(), pod, &lifecycle.PodStatus{ID: pod.UID}, nil, nil); err != nil {
				t.Fatal(err)
			}
		}},
		{"SyncTerminatedPod", func(t *testing.T, s *lifecycle.Syncer, pod *v1.Pod) {
			if err := s.SyncTerminatedPod(t.Context(), pod, &lifecycle.PodStatus{ID: pod.UID}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		for _, hostNetwork := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s host network %t", step.name, hostNetwork), func(t *testing.T) {
				e := newStatusEnv()
				pod := apiPod("1", "p")
				pod.Spec.Containers = pod.Spec.Containers[:1]
				pod.Spec.HostNetwork = hostNetwork
				rt := lifecycletest.NewFakeRuntime()
				s := &lifecycle.Syncer{Runtime: rt, Status: e.m, Pods: e.state, HostIPs: nodeIPs}
				step.sync(t, s, pod)
				st, ok := e.m.PodStatus(pod.UID)
				if !ok {
					t.Fatal("no status cached")
				}
				if st.HostIP != nodeIPs[0] || len(st.HostIPs) != 2 || st.HostIPs[1].IP != nodeIPs[1] {
					t.Errorf("hostIP %q hostIPs %v; want %v", st.HostIP, st.HostIPs, nodeIPs)
				}
				wantPodIP := ""
				if hostNetwork {
					wantPodIP = nodeIPs[0]
				}
				if st.PodIP != wantPodIP {
					t.Errorf("podIP %q; want %q", st.PodIP, wantPodIP)
				}
			})
		}
	}
}

// TestSyncerKeepsTheExitOfAVanishedContainer checks status rule 5(h) when
// a container that exited is removed from the runtime (container GC,
// crictl rm) between SyncTerminatingPod and SyncTerminatedPod: the final
// status keeps the exit the runtime showed, as the kubelet keeps a
// container's last terminated state, instead of regenerating it as
// waiting and letting TerminatePod report it lost (137) under a phase
// Succeeded that the exit 0 had decided.
func TestSyncerKeepsTheExitOfAVanishedContainer(t *testing.T) {
	for _, policy := range []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever} {
		for _, code := range []int32{0, 3} {
			t.Run(fmt.Sprintf("%s exit %d", policy, code), func(t *testing.T) {
				ctx := t.Context()
				e := newStatusEnv()
				pod := apiPod("1", "p")
				pod.Spec.Containers = pod.Spec.Containers[:1]
				pod.Spec.RestartPolicy = policy
				rt := lifecycletest.NewFakeRuntime()
				s := &lifecycle.Syncer{Runtime: rt, Status: e.m, Pods: e.state}
				if _, err := s.SyncPod(ctx, lifecycle.UpdateCreate, pod, nil, &lifecycle.PodStatus{ID: "1"}); err != nil {
					t.Fatal(err)
				}
				rt.ExitContainer("1", "c1", code)
				exited, _ := rt.PodStatus(ctx, "1", "p", "ns")
				e.state.terminating["1"] = true
				if err := s.SyncTerminatingPod(ctx, pod, exited, nil, nil); err != nil {
					t.Fatal(err)
				}
				rt.RemovePod("1") // the exited container is removed before the final status
				gone, _ := rt.PodStatus(ctx, "1", "p", "ns")
				if err := s.SyncTerminatedPod(ctx, pod, gone); err != nil {
					t.Fatal(err)
				}
				st, _ := e.m.PodStatus("1")
				c := st.ContainerStatuses[0]
				if term := c.State.Terminated; term == nil || term.ExitCode != code {
					t.Errorf("final state of c1 %+v (phase %s); want terminated with exit %d", c.State, st.Phase, code)
				}
				want := v1.PodSucceeded
				if code != 0 {
					want = v1.PodFailed
				}
				if st.Phase != want {
					t.Errorf("final phase %s; want %s", st.Phase, want)
				}
			})
		}
	}
}

// TestSyncerKeepsDisruptionTargetToFinalStatus follows a pod evicted for
// node pressure through its three syncs: the kill's status function sets
// phase Failed, reason Evicted and the DisruptionTarget condition, as the
// kubelet's eviction manager does. The condition must stay in every later
// status the Syncer generates (the kubelet's generateAPIPodStatus copies
// it from the cached status) and reach the sink with the terminal phase,
// once no container can run, with its transition time the clock's.
func TestSyncerKeepsDisruptionTargetToFinalStatus(t *testing.T) {
	const msg = "The node was low on resource: memory. "
	e := newStatusEnv()
	pod := apiPod("1", "p")
	pod.Spec.Containers = pod.Spec.Containers[:1]
	e.sink.Store(pod)
	rt := lifecycletest.NewFakeRuntime()
	s := &lifecycle.Syncer{Runtime: rt, Status: e.m, Pods: e.state}
	ctx := t.Context()
	if _, err := s.SyncPod(ctx, lifecycle.UpdateCreate, pod, nil, &lifecycle.PodStatus{ID: pod.UID}); err != nil {
		t.Fatal(err)
	}
	e.state.running[pod.UID] = true
	e.m.SyncBatch(ctx, false)

	e.clock.Step(time.Second)
	evictedAt := e.clock.Now()
	e.state.terminating[pod.UID] = true
	evict := func(st *v1.PodStatus) {
		st.Phase, st.Reason, st.Message = v1.PodFailed, "Evicted", msg
		st.Conditions = append(st.Conditions, v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue,
			Reason: v1.PodReasonTerminationByKubelet, Message: msg, LastTransitionTime: metav1.NewTime(evictedAt)})
	}
	status, err := rt.PodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	grace := int64(1)
	if err := s.SyncTerminatingPod(ctx, pod, status, &grace, evict); err != nil {
		t.Fatal(err)
	}
	// Written while a container could still run: the API keeps the
	// running phase and gets no DisruptionTarget yet.
	e.m.SyncBatch(ctx, false)
	if api, _ := e.sink.Pod(pod.Namespace, pod.Name); api.Status.Phase == v1.PodFailed {
		t.Errorf("terminal phase written while a container could run")
	}

	e.clock.Step(time.Second)
	e.state.running[pod.UID] = false
	status, err = rt.PodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SyncTerminatedPod(ctx, pod, status); err != nil {
		t.Fatal(err)
	}
	cached, _ := e.m.PodStatus(pod.UID)
	e.m.SyncBatch(ctx, true)
	api, _ := e.sink.Pod(pod.Namespace, pod.Name)
	for name, st := range map[string]v1.PodStatus{"cached": cached, "sink": api.Status} {
		if st.Phase != v1.PodFailed || st.Reason != "Evicted" || st.Message != msg {
			t.Errorf("%s: phase %s reason %q message %q; want Failed, Evicted, %q", name, st.Phase, st.Reason, st.Message, msg)
		}
		var dt *v1.PodCondition
		for i := range st.Conditions {
			if st.Conditions[i].Type == v1.DisruptionTarget {
				dt = &st.Conditions[i]
			}
		}
		switch {
		case dt == nil:
			t.Errorf("%s: no DisruptionTarget condition in the final status %v", name, st.Conditions)
		case dt.Status != v1.ConditionTrue || dt.Reason != v1.PodReasonTerminationByKubelet || dt.Message != msg:
			t.Errorf("%s: DisruptionTarget %+v; want True, %s, %q", name, *dt, v1.PodReasonTerminationByKubelet, msg)
		case !dt.LastTransitionTime.Time.Equal(evictedAt):
			t.Errorf("%s: DisruptionTarget last transition %v; want %v (the eviction)", name, dt.LastTransitionTime, evictedAt)
		}
	}
}
