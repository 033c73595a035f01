package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

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
