package runtimemanager

import (
	"context"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"

	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// statusCounting is a bare-list runtime that counts ContainerStatus calls.
type statusCounting struct {
	bareList
	calls atomic.Int32
}

func (s *statusCounting) ContainerStatus(ctx context.Context, req *runtimev1.ContainerStatusRequest, opts ...grpc.CallOption) (*runtimev1.ContainerStatusResponse, error) {
	s.calls.Add(1)
	return s.bareList.ContainerStatus(ctx, req, opts...)
}

// TestPodStatusReadsDetailsOnce checks that the start and exit facts of a
// container are asked of the runtime once per state: inspecting a pod
// again asks only for the containers whose listed state moved on, and the
// facts given back are the runtime's.
func TestPodStatusReadsDetailsOnce(t *testing.T) {
	e := newEnv(t)
	rtc := &statusCounting{bareList: bareList{e.client}}
	m, err := New(Options{Runtime: rtc, Clock: e.clock, LogRoot: e.root})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pod := newPod("details", "a", "b")
	if err := m.SyncPod(ctx, pod, nil); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, c := range e.fake.Containers() {
		ids[c.GetMetadata().GetName()] = c.GetId()
	}
	for _, step := range []struct {
		name      string
		exit      string // container to exit first, if any
		wantCalls int32
		wantA     lifecycle.ContainerState
	}{
		{"first inspection reads both", "", 2, lifecycle.ContainerRunning},
		{"again reads none", "", 0, lifecycle.ContainerRunning},
		{"a exited: reads a", "a", 1, lifecycle.ContainerExited},
		{"again reads none after the exit", "", 0, lifecycle.ContainerExited},
	} {
		if step.exit != "" {
			e.fake.ExitContainer(ids[step.exit], 3)
		}
		rtc.calls.Store(0)
		st, err := m.PodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
		if err != nil {
			t.Fatalf("%s: PodStatus: %v", step.name, err)
		}
		if got := rtc.calls.Load(); got != step.wantCalls {
			t.Errorf("%s: %d ContainerStatus calls; want %d", step.name, got, step.wantCalls)
		}
		a := st.Container("a")
		switch {
		case a == nil || a.State != step.wantA || a.StartedAt.IsZero():
			t.Errorf("%s: container a %+v; want %s with its start time", step.name, a, step.wantA)
		case step.wantA == lifecycle.ContainerExited && (a.ExitCode != 3 || a.FinishedAt.IsZero()):
			t.Errorf("%s: container a exit %d at %v; want exit 3 with its finish time", step.name, a.ExitCode, a.FinishedAt)
		}
	}
}
