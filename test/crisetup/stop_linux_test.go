package crisetup

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/images/localimages"
)

// A sandbox whose shim is already gone is stopped, not a leak: containerd
// 1.6 may answer StopPodSandbox with "failed to kill sandbox container:
// ttrpc: closed" while it reaps the dead shim. Stop succeeds, and leaves
// nothing behind.
func TestStopTreatsDeadShimAsStopped(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := start(ctx, t.TempDir(), true)
	if err != nil {
		t.Fatalf("start private containerd: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	var pids []int
	for _, name := range []string{"a", "b", "c"} {
		pids = append(pids, runSandbox(ctx, t, c, name))
	}
	shims, err := c.Shims()
	if err != nil || len(shims) != len(pids) {
		t.Fatalf("Shims = %v, %v; want %d", shims, err, len(pids))
	}
	// Freeze the shims so that Stop's calls hang in them, then kill them
	// under those calls.
	signal := func(sig syscall.Signal) {
		for _, pid := range shims {
			if err := syscall.Kill(pid, sig); err != nil {
				t.Fatal(err)
			}
		}
	}
	signal(syscall.SIGSTOP)
	stopped := make(chan error, 1)
	go func() { stopped <- c.Stop(ctx) }()
	for !strings.Contains(readFile(c.Log), "StopPodSandbox for") {
		select {
		case err := <-stopped:
			t.Fatalf("Stop returned %v before the shims died", err)
		case <-ctx.Done():
			t.Fatal("Stop never asked containerd to stop a sandbox")
		case <-time.After(10 * time.Millisecond):
		}
	}
	signal(syscall.SIGKILL)
	if err := <-stopped; err != nil {
		t.Errorf("Stop with the shims killed under it: %v; want nil (nothing leaked)\n%s", err, c.LogTail(60))
	}
	if left, err := c.Shims(); err != nil || len(left) != 0 {
		t.Errorf("after Stop: shims %v, %v", left, err)
	}
	if !waitGone(pids, 10*time.Second) {
		t.Errorf("sandbox processes %v survived Stop", pids)
	}
}

// runSandbox runs a host-network sandbox with a sleeping busybox container
// and returns the sandbox's pause PID.
func runSandbox(ctx context.Context, t *testing.T, c *Containerd, name string) int {
	t.Helper()
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: name + "-uid"},
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
		}},
	}
	sb, err := c.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	ctr, err := c.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: sb.PodSandboxId, SandboxConfig: cfg,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "sleeper"},
			Image:    &runtimeapi.ImageSpec{Image: localimages.BusyboxName},
			Command:  []string{"sleep", "3600"},
		},
	})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if _, err := c.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: ctr.ContainerId}); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	st, err := c.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.PodSandboxId, Verbose: true})
	if err != nil {
		t.Fatalf("PodSandboxStatus: %v", err)
	}
	var info struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(st.Info["info"]), &info); err != nil || info.Pid <= 0 {
		t.Fatalf("sandbox pid from verbose status: %v (info %q)", err, st.Info["info"])
	}
	return info.Pid
}

func readFile(name string) string {
	b, _ := os.ReadFile(name)
	return string(b)
}
