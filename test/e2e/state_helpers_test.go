package e2e

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/host/state"
)

// storedPod reads the pod's record from the state database of a host that
// is not running.
func (h *podHost) storedPod(name string) state.PodRecord {
	h.t.Helper()
	store, err := state.Open(filepath.Join(h.root, state.FileName), hclog.NewNullLogger())
	if err != nil {
		h.t.Fatalf("opening the stopped host's state: %v", err)
	}
	defer store.Close()
	rec, err := store.Pod(h.t.Context(), "default", name)
	if err != nil {
		h.t.Fatalf("stored pod %s: %v", name, err)
	}
	return rec
}

// removeFromRuntime removes every container and sandbox of the pod UID
// from containerd, as a runtime that lost them (or an operator) would. A
// host killed with SIGKILL may leave its plugin's stop of the same sandbox
// running in containerd, which then fails a concurrent stop ("ttrpc:
// closed" while the shim goes away); each call is therefore retried until
// it succeeds or finds the object gone, as CRI's stop and remove are
// idempotent.
func (h *podHost) removeFromRuntime(uid string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.t.Context(), 60*time.Second)
	defer cancel()
	byUID := map[string]string{runtimemanager.LabelPodUID: uid}
	ctrs, err := criContainerStatuses(ctx, h.ctrd, byUID)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, c := range ctrs {
		h.retryCRI(ctx, "RemoveContainer "+c.Id, func() error {
			_, err := h.ctrd.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.Id})
			return err
		})
	}
	sbs, err := criSandboxes(ctx, h.ctrd, byUID)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, s := range sbs {
		h.retryCRI(ctx, "StopPodSandbox "+s.Id, func() error {
			_, err := h.ctrd.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.Id})
			return err
		})
		h.retryCRI(ctx, "RemovePodSandbox "+s.Id, func() error {
			_, err := h.ctrd.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.Id})
			return err
		})
	}
}

// retryCRI calls call until it succeeds or answers NotFound, every 200 ms
// until ctx ends; then the test fails with the last error.
func (h *podHost) retryCRI(ctx context.Context, what string, call func() error) {
	h.t.Helper()
	for {
		err := call()
		if err == nil || status.Code(err) == codes.NotFound {
			return
		}
		select {
		case <-ctx.Done():
			h.t.Fatalf("%s: %v", what, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// startWatching starts a host and watches the pods from the moment its API
// socket answers, so that no status the new host serves is missed. The
// changes arrive on the returned channel until the test ends.
func (h *podHost) startWatching() <-chan localapi.PodEvent {
	h.t.Helper()
	out := make(chan localapi.PodEvent, 1024)
	sock := filepath.Join(h.root, "host.sock")
	go func() {
		ctx := h.t.Context()
		for ctx.Err() == nil {
			c, err := net.Dial("unix", sock)
			if err != nil {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			c.Close()
			err = h.client.WatchPods(ctx, func(ev localapi.PodEvent) error {
				select {
				case out <- ev:
				default:
				}
				return nil
			})
			if err == nil || errors.Is(err, context.Canceled) {
				return
			}
		}
	}()
	h.start()
	return out
}

// terminatedAs reports whether the container status is terminated with the
// exit code and the container ID of want.
func terminatedAs(got *v1.ContainerStatus, want *v1.ContainerStatus) bool {
	return got != nil && got.State.Terminated != nil && want.State.Terminated != nil &&
		got.State.Terminated.ExitCode == want.State.Terminated.ExitCode &&
		got.State.Terminated.Reason == want.State.Terminated.Reason &&
		got.ContainerID == want.ContainerID &&
		got.State.Terminated.FinishedAt.Equal(&want.State.Terminated.FinishedAt)
}

// storedContainer is the named container's status in a stored record.
func storedContainer(rec state.PodRecord, name string) *v1.ContainerStatus {
	return containerStatus(&v1.Pod{Status: rec.Status}, name)
}
