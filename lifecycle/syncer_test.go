package lifecycle_test

import (
	"context"
	"errors"
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
