package e2e

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
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
// from containerd, as a runtime that lost them (or an operator) would.
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
		if _, err := h.ctrd.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.Id}); err != nil {
			h.t.Fatalf("RemoveContainer %s: %v", c.Id, err)
		}
	}
	sbs, err := criSandboxes(ctx, h.ctrd, byUID)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, s := range sbs {
		if _, err := h.ctrd.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			h.t.Fatalf("StopPodSandbox %s: %v", s.Id, err)
		}
		if _, err := h.ctrd.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			h.t.Fatalf("RemovePodSandbox %s: %v", s.Id, err)
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
