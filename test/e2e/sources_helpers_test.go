package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/host/runtimemanager"
)

// Helpers of the sources, API and state tests, on top of harness_test.go's
// podHost.

// staticName is the name a static pod gets on this node: the manifest's
// name with "-<node name>" appended.
func staticName(t *testing.T, name string) string {
	t.Helper()
	node, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return name + "-" + node
}

// writeManifest writes a manifest file into the host's manifest directory
// atomically (temporary dotfile, then rename), as an editor or a config
// management tool would; the source ignores dotfiles.
func (h *podHost) writeManifest(name, doc string) string {
	h.t.Helper()
	path := filepath.Join(h.manifests, name)
	tmp := filepath.Join(h.manifests, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(doc), 0o600); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		h.t.Fatal(err)
	}
	return path
}

// hostPID is the running host's process ID, 0 when none runs.
func (h *podHost) hostPID() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.proc == nil {
		return 0
	}
	return h.proc.Process.Pid
}

// sigtermHost stops the host with SIGTERM, as systemd does, and waits for
// it to exit with status 0. Containers keep running.
func (h *podHost) sigtermHost() {
	h.t.Helper()
	h.mu.Lock()
	proc, exited := h.proc, h.exited
	h.proc = nil
	h.mu.Unlock()
	if proc == nil {
		h.t.Fatal("sigtermHost: no host running")
	}
	if err := proc.Process.Signal(syscall.SIGTERM); err != nil {
		h.t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			h.t.Fatalf("host exited with %v after SIGTERM; want status 0\n%s", err, h.logTail())
		}
	case <-time.After(30 * time.Second):
		_ = proc.Process.Kill()
		<-exited
		h.t.Fatalf("host did not exit within 30 s of SIGTERM\n%s", h.logTail())
	}
}

// runningContainers lists the pod UID's containers that containerd reports
// running.
func (h *podHost) runningContainers(uid string) []*runtimeapi.ContainerStatus {
	h.t.Helper()
	var out []*runtimeapi.ContainerStatus
	for _, c := range h.criContainers(uid) {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			out = append(out, c)
		}
	}
	return out
}

// waitRuntimeEmpty waits until containerd has no container and no sandbox
// of the pod UID left.
func (h *podHost) waitRuntimeEmpty(uid string, limit time.Duration) {
	h.t.Helper()
	var left string
	poll(h.t, limit, func() bool {
		ctx, cancel := context.WithTimeout(h.t.Context(), 10*time.Second)
		defer cancel()
		labels := map[string]string{runtimemanager.LabelPodUID: uid}
		ctrs, err1 := criContainerStatuses(ctx, h.ctrd, labels)
		sbs, err2 := criSandboxes(ctx, h.ctrd, labels)
		left = ""
		for _, c := range ctrs {
			left += " container " + c.Metadata.Name + " " + c.State.String()
		}
		for _, s := range sbs {
			left += " sandbox " + s.Id + " " + s.State.String()
		}
		return err1 == nil && err2 == nil && len(ctrs) == 0 && len(sbs) == 0
	}, func() string { return "pod uid " + uid + " still in containerd:" + left + "\n" + h.logTail() })
}

// podsListLine returns the line of `podhost pods list` that contains every
// one of parts, or "" and the whole output.
func (h *podHost) podsListLine(parts ...string) (string, string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.t.Context(), 10*time.Second)
	defer cancel()
	out, err := h.hostCLI(ctx, "pods", "list")
	if err != nil {
		return "", err.Error()
	}
	for _, line := range strings.Split(out, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return line, out
		}
	}
	return "", out
}

// runningContainerID waits until the pod runs and returns its one
// container's ID.
func (h *podHost) runningContainerID(name string, limit time.Duration) (*v1.Pod, string) {
	h.t.Helper()
	pod := h.waitPod(name, limit, "running", running)
	return pod, pod.Status.ContainerStatuses[0].ContainerID
}
