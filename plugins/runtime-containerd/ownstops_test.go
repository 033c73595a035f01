package main

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeCRI is containerd's CRI as a map of objects. The stop and remove
// calls block until release is closed, as containerd's do until the task
// has exited or the object is gone, and count every call by method.
type fakeCRI struct {
	criapi.RuntimeServiceClient // the calls a test does not expect panic

	mu         sync.Mutex
	sandboxes  map[string]criapi.PodSandboxState
	containers map[string]criapi.ContainerState // all in sandbox s1
	calls      map[string]int
	entered    chan string   // the blocking call's method, when it began
	release    chan struct{} // closed to let it finish
}

func newFakeCRI() *fakeCRI {
	return &fakeCRI{
		sandboxes:  map[string]criapi.PodSandboxState{"s1": criapi.PodSandboxState_SANDBOX_READY},
		containers: map[string]criapi.ContainerState{"c1": criapi.ContainerState_CONTAINER_RUNNING},
		calls:      map[string]int{}, entered: make(chan string, 1), release: make(chan struct{}),
	}
}

func (f *fakeCRI) count(method string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[method]++
}

// block stands for a call that takes effect once released.
func (f *fakeCRI) block(method string, effect func()) {
	f.count(method)
	f.entered <- method
	<-f.release
	f.mu.Lock()
	defer f.mu.Unlock()
	effect()
}

func (f *fakeCRI) lists() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls["ListContainers"] + f.calls["ListPodSandbox"]
}

func (f *fakeCRI) ListPodSandbox(_ context.Context, req *criapi.ListPodSandboxRequest, _ ...grpc.CallOption) (*criapi.ListPodSandboxResponse, error) {
	f.count("ListPodSandbox")
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*criapi.PodSandbox
	for id, st := range f.sandboxes {
		if want := req.GetFilter().GetId(); want == "" || strings.HasPrefix(id, want) {
			out = append(out, &criapi.PodSandbox{Id: id, State: st, Labels: map[string]string{"name": id, labelSandboxID: ""}})
		}
	}
	return &criapi.ListPodSandboxResponse{Items: out}, nil
}

func (f *fakeCRI) ListContainers(_ context.Context, req *criapi.ListContainersRequest, _ ...grpc.CallOption) (*criapi.ListContainersResponse, error) {
	f.count("ListContainers")
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*criapi.Container
	for id, st := range f.containers {
		if want := req.GetFilter().GetId(); want == "" || strings.HasPrefix(id, want) {
			out = append(out, &criapi.Container{Id: id, PodSandboxId: "s1", State: st, Labels: map[string]string{"name": id, labelSandboxID: "s1"}})
		}
	}
	return &criapi.ListContainersResponse{Containers: out}, nil
}

func (f *fakeCRI) StopContainer(_ context.Context, req *criapi.StopContainerRequest, _ ...grpc.CallOption) (*criapi.StopContainerResponse, error) {
	f.block("StopContainer", func() { f.containers[req.GetContainerId()] = criapi.ContainerState_CONTAINER_EXITED })
	return &criapi.StopContainerResponse{}, nil
}

func (f *fakeCRI) RemoveContainer(_ context.Context, req *criapi.RemoveContainerRequest, _ ...grpc.CallOption) (*criapi.RemoveContainerResponse, error) {
	f.block("RemoveContainer", func() { delete(f.containers, req.GetContainerId()) })
	return &criapi.RemoveContainerResponse{}, nil
}

func (f *fakeCRI) StopPodSandbox(_ context.Context, req *criapi.StopPodSandboxRequest, _ ...grpc.CallOption) (*criapi.StopPodSandboxResponse, error) {
	f.block("StopPodSandbox", func() {
		f.sandboxes[req.GetPodSandboxId()] = criapi.PodSandboxState_SANDBOX_NOTREADY
		for id := range f.containers {
			f.containers[id] = criapi.ContainerState_CONTAINER_EXITED
		}
	})
	return &criapi.StopPodSandboxResponse{}, nil
}

func (f *fakeCRI) RemovePodSandbox(_ context.Context, req *criapi.RemovePodSandboxRequest, _ ...grpc.CallOption) (*criapi.RemovePodSandboxResponse, error) {
	f.block("RemovePodSandbox", func() {
		delete(f.sandboxes, req.GetPodSandboxId())
		clear(f.containers)
	})
	return &criapi.RemovePodSandboxResponse{}, nil
}

// scriptedEvents is the plugin's own CRI look-ups and listings with
// containerd's event stream scripted by the test.
type scriptedEvents struct {
	*criRuntime
	streams chan *fakeStream
}

func (s scriptedEvents) subscribe(ctx context.Context) (taskEvents, error) {
	st := &fakeStream{ctx: ctx, events: make(chan taskEvent, 10), broken: make(chan error, 1)}
	s.streams <- st
	return st, nil
}

// TestWatcherLeavesThePluginsOwnStopsToTheirNotes: containerd tells of an
// exit or a removal while the plugin's own stop or remove call still
// waits for it. The call's note reports the change when the call returns,
// so the watcher asks CRI nothing meanwhile; before, it looked the object
// up with back-off for as long as the call lasted (for every container and
// sandbox of a pod deletion: the most CRI calls of a pod's lifecycle).
func TestWatcherLeavesThePluginsOwnStopsToTheirNotes(t *testing.T) {
	tests := []struct {
		name   string
		before func(*fakeCRI) // CRI's objects before the call
		call   func(context.Context, *criRuntime) error
		event  taskEvent
		want   []string
	}{
		{"StopContainer and the task's exit", nil,
			func(ctx context.Context, r *criRuntime) error { return r.StopContainer(ctx, "c1", 5*time.Second) },
			ctrExit("c1"), []string{"exited c1@s1"}},
		{"RemoveContainer and the container's deletion",
			func(f *fakeCRI) { f.containers["c1"] = criapi.ContainerState_CONTAINER_EXITED },
			func(ctx context.Context, r *criRuntime) error { return r.RemoveContainer(ctx, "c1") },
			ctrRemoved("c1"), []string{"removed c1@s1"}},
		{"StopSandbox and the sandbox task's exit",
			func(f *fakeCRI) { f.containers["c1"] = criapi.ContainerState_CONTAINER_EXITED },
			func(ctx context.Context, r *criRuntime) error { return r.StopSandbox(ctx, "s1") },
			ctrExit("s1"), []string{"sandbox-notready s1"}},
		{"RemoveSandbox and the sandbox's deletion",
			func(f *fakeCRI) {
				f.sandboxes["s1"] = criapi.PodSandboxState_SANDBOX_NOTREADY
				clear(f.containers)
			},
			func(ctx context.Context, r *criRuntime) error { return r.RemoveSandbox(ctx, "s1") },
			ctrRemoved("s1"), []string{"sandbox-removed s1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cri := newFakeCRI()
				if tt.before != nil {
					tt.before(cri)
				}
				r := newCRIRuntime(testLogger())
				r.current.Store(&backend{cfg: defaultConfig(), rt: cri})
				src := scriptedEvents{criRuntime: r, streams: make(chan *fakeStream, 1)}
				r.watch = newWatcher(src, testLogger())
				r.watch.now = func() time.Time { return time.Unix(0, 42) }
				ch, unsubscribe, err := r.Subscribe(t.Context())
				if err != nil {
					t.Fatalf("Subscribe: %v", err)
				}
				defer unsubscribe()
				stream := <-src.streams
				baseline := cri.lists()

				result := make(chan error, 1)
				go func() { result <- tt.call(t.Context(), r) }()
				<-cri.entered
				stream.events <- tt.event          // containerd tells before CRI answers the call
				time.Sleep(500 * time.Millisecond) // fake time: the call lasts
				close(cri.release)
				if err := <-result; err != nil {
					t.Fatalf("call: %v", err)
				}
				if got := received(t, ch); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("events: got %q; want %q", got, tt.want)
				}
				if n := cri.lists() - baseline; n != 0 {
					t.Errorf("%d CRI listings after the baseline; want none (the call's note tells)", n)
				}
			})
		})
	}
}

// PodSandboxStatus reports every sandbox with the IP 10.0.0.5.
func (f *fakeCRI) PodSandboxStatus(_ context.Context, req *criapi.PodSandboxStatusRequest, _ ...grpc.CallOption) (*criapi.PodSandboxStatusResponse, error) {
	f.count("PodSandboxStatus")
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.sandboxes[req.GetPodSandboxId()]
	if !ok {
		return nil, status.Error(codes.NotFound, "not found")
	}
	return &criapi.PodSandboxStatusResponse{Status: &criapi.PodSandboxStatus{
		Id: req.GetPodSandboxId(), State: st, Network: &criapi.PodSandboxNetworkStatus{Ip: "10.0.0.5"},
	}}, nil
}
