package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// startingCRI is containerd's CRI while a start cut short by its caller
// still runs inside it: it refuses to remove the container, and the sandbox
// holding it, with containerd's message until the start ends (after
// refusals calls), then removes.
type startingCRI struct {
	criapi.RuntimeServiceClient // the calls a test does not expect panic

	mu       sync.Mutex
	refusals int
	calls    map[string]int
}

func (f *startingCRI) refuse(method, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[method]++
	if f.refusals == 0 {
		return nil
	}
	f.refusals--
	// What containerd 2.x answers (code Unknown: a plain error).
	msg := fmt.Sprintf("failed to set removing state for container %q: container is in starting state, can't be removed", id)
	if method == "RemovePodSandbox" {
		msg = fmt.Sprintf("failed to remove container %q: %s", "c1", msg)
	}
	return status.Error(codes.Unknown, msg)
}

func (f *startingCRI) RemoveContainer(_ context.Context, req *criapi.RemoveContainerRequest, _ ...grpc.CallOption) (*criapi.RemoveContainerResponse, error) {
	return &criapi.RemoveContainerResponse{}, f.refuse("RemoveContainer", req.GetContainerId())
}

func (f *startingCRI) RemovePodSandbox(_ context.Context, req *criapi.RemovePodSandboxRequest, _ ...grpc.CallOption) (*criapi.RemovePodSandboxResponse, error) {
	return &criapi.RemovePodSandboxResponse{}, f.refuse("RemovePodSandbox", req.GetPodSandboxId())
}

// TestRemovalWaitsForACutShortStart: a removal that meets a start still in
// flight inside containerd waits for it instead of failing (the e2e
// TestPodDeletedWhileStarting saw the host's removal fail so, and the
// pod's containers stay until the next garbage collection a minute later).
func TestRemovalWaitsForACutShortStart(t *testing.T) {
	for _, tc := range []struct {
		method string
		remove func(context.Context, *backend) error
	}{
		{"RemoveContainer", func(ctx context.Context, b *backend) error { return b.removeContainer(ctx, "c1") }},
		{"RemovePodSandbox", func(ctx context.Context, b *backend) error { return b.removeSandbox(ctx, "s1") }},
	} {
		t.Run(tc.method, func(t *testing.T) {
			cri := &startingCRI{refusals: 3, calls: map[string]int{}}
			b := &backend{rt: cri}
			if err := tc.remove(t.Context(), b); err != nil {
				t.Fatalf("removal during a start: %v; want it to wait for the start and succeed", err)
			}
			if got := cri.calls[tc.method]; got != 4 {
				t.Errorf("%s called %d times; want 4 (3 refusals, then the removal)", tc.method, got)
			}

			// A start that never ends: the removal fails with
			// containerd's error once its context ends.
			cri = &startingCRI{refusals: 1 << 30, calls: map[string]int{}}
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			defer cancel()
			err := tc.remove(ctx, &backend{rt: cri})
			if err == nil || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("removal during an endless start: %v; want the refusal and the deadline", err)
			}
		})
	}
}
