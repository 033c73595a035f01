package crisetup

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// flakyCRI holds sandboxes whose stop fails stopFails times with containerd's
// error for a shim that is already gone, and whose removal fails
// removeFails times (-1: always, a real leak).
type flakyCRI struct {
	runtimeapi.RuntimeServiceClient
	mu                     sync.Mutex
	sandboxes              map[string]bool
	stopFails, removeFails map[string]int
}

func (f *flakyCRI) ListPodSandbox(context.Context, *runtimeapi.ListPodSandboxRequest, ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	resp := &runtimeapi.ListPodSandboxResponse{}
	for id := range f.sandboxes {
		resp.Items = append(resp.Items, &runtimeapi.PodSandbox{Id: id})
	}
	return resp, nil
}

func (f *flakyCRI) StopPodSandbox(_ context.Context, req *runtimeapi.StopPodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.StopPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopFails[req.PodSandboxId] != 0 {
		f.stopFails[req.PodSandboxId]--
		return nil, status.Error(codes.Unknown, "failed to kill sandbox container: ttrpc: closed")
	}
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

func (f *flakyCRI) RemovePodSandbox(_ context.Context, req *runtimeapi.RemovePodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.RemovePodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.removeFails[req.PodSandboxId] != 0 {
		f.removeFails[req.PodSandboxId]--
		return nil, status.Error(codes.Unknown, "failed to forcibly stop sandbox: ttrpc: closed")
	}
	delete(f.sandboxes, req.PodSandboxId)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

func (f *flakyCRI) ListContainers(context.Context, *runtimeapi.ListContainersRequest, ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error) {
	return &runtimeapi.ListContainersResponse{}, nil
}

// removeAll treats a sandbox whose stop failed because its shim is gone as
// stopped once it could be removed, and fails only for a sandbox that
// stays.
func TestRemoveAllDeadShimIsNoLeak(t *testing.T) {
	tests := []struct {
		name                   string
		stopFails, removeFails map[string]int
		wantErr                string // "" for none
	}{
		{name: "all stop"},
		{name: "stop fails, removal works", stopFails: map[string]int{"a": 1}},
		{name: "stop and removal fail a while", stopFails: map[string]int{"a": 3}, removeFails: map[string]int{"a": 2, "b": 1}},
		{name: "a sandbox that stays", stopFails: map[string]int{"b": 1}, removeFails: map[string]int{"b": -1}, wantErr: "remove sandbox b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &flakyCRI{sandboxes: map[string]bool{"a": true, "b": true, "c": true}, stopFails: tt.stopFails, removeFails: tt.removeFails}
			// A sandbox that stays is retried until ctx ends.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			errs := (&Containerd{Runtime: f}).removeAll(ctx)
			f.mu.Lock()
			left := len(f.sandboxes)
			f.mu.Unlock()
			switch {
			case tt.wantErr == "" && len(errs) != 0:
				t.Errorf("removeAll: %v; want no error", errs)
			case tt.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.wantErr)):
				t.Errorf("removeAll: %v; want one error about %q", errs, tt.wantErr)
			case tt.wantErr == "" && left != 0:
				t.Errorf("%d sandboxes left; want none", left)
			}
		})
	}
}
