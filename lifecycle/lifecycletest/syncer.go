package lifecycletest

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// FakeSyncer records every sync* call as a line ("SyncPod p create",
// "SyncTerminatingPod p grace=2", "SyncTerminatingRuntimePod uid",
// "SyncTerminatedPod p") and runs the per-test function fields. A nil
// field succeeds at once.
type FakeSyncer struct {
	mu    sync.Mutex
	calls []string

	SyncPodFunc             func(ctx context.Context, pod *v1.Pod, status *lifecycle.PodStatus) (bool, error)
	SyncTerminatingFunc     func(ctx context.Context, pod *v1.Pod, grace *int64) error
	SyncTerminatingRuntFunc func(ctx context.Context, pod *lifecycle.RunningPod) error
	SyncTerminatedFunc      func(ctx context.Context, pod *v1.Pod) error
}

func (s *FakeSyncer) record(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf(format, args...))
}

// Calls returns the recorded calls.
func (s *FakeSyncer) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// SyncPod records the call and runs SyncPodFunc.
func (s *FakeSyncer) SyncPod(ctx context.Context, ut lifecycle.UpdateType, pod, _ *v1.Pod, status *lifecycle.PodStatus) (bool, error) {
	s.record("SyncPod %s %s", pod.Name, ut)
	if s.SyncPodFunc != nil {
		return s.SyncPodFunc(ctx, pod, status)
	}
	return false, nil
}

// SyncTerminatingPod records the call and runs SyncTerminatingFunc.
func (s *FakeSyncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, _ *lifecycle.PodStatus, grace *int64, _ func(*v1.PodStatus)) error {
	g := "nil"
	if grace != nil {
		g = strconv.FormatInt(*grace, 10)
	}
	s.record("SyncTerminatingPod %s grace=%s", pod.Name, g)
	if s.SyncTerminatingFunc != nil {
		return s.SyncTerminatingFunc(ctx, pod, grace)
	}
	return nil
}

// SyncTerminatingRuntimePod records the call and runs SyncTerminatingRuntFunc.
func (s *FakeSyncer) SyncTerminatingRuntimePod(ctx context.Context, pod *lifecycle.RunningPod) error {
	s.record("SyncTerminatingRuntimePod %s", pod.ID)
	if s.SyncTerminatingRuntFunc != nil {
		return s.SyncTerminatingRuntFunc(ctx, pod)
	}
	return nil
}

// SyncTerminatedPod records the call and runs SyncTerminatedFunc.
func (s *FakeSyncer) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, _ *lifecycle.PodStatus) error {
	s.record("SyncTerminatedPod %s", pod.Name)
	if s.SyncTerminatedFunc != nil {
		return s.SyncTerminatedFunc(ctx, pod)
	}
	return nil
}

var _ lifecycle.PodSyncer = (*FakeSyncer)(nil)
