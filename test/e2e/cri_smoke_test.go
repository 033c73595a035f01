package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/test/crisetup"
)

// TestCRISmoke runs one host-network pod with one busybox container that
// prints and exits 3, straight over CRI, and checks the exit code and the
// CRI log file.
func TestCRISmoke(t *testing.T) {
	c := crisetup.StartForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	rt := c.Runtime

	version, err := rt.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		t.Fatalf("Version: %v", err)
	}
	t.Logf("runtime %s %s, CRI %s", version.RuntimeName, version.RuntimeVersion, version.RuntimeApiVersion)

	for _, name := range []string{localimages.PauseName, localimages.BusyboxName} {
		st, err := c.Image.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: name}})
		if err != nil {
			t.Fatalf("ImageStatus %s: %v", name, err)
		}
		if st.GetImage() == nil || !contains(st.Image.RepoTags, name) {
			t.Fatalf("ImageStatus %s: image %v, want repo tag %s", name, st.GetImage(), name)
		}
	}

	logDir := filepath.Join(t.TempDir(), "pod-logs")
	sandboxConfig := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name: "smoke", Namespace: "default", Uid: "00000000-0000-0000-0000-00000000beef",
		},
		LogDirectory: logDir,
		Labels:       map[string]string{"podhost.io/test": "smoke"},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{
					Network: runtimeapi.NamespaceMode_NODE,
					Pid:     runtimeapi.NamespaceMode_CONTAINER,
					Ipc:     runtimeapi.NamespaceMode_POD,
				},
			},
		},
	}
	start := time.Now()
	sandbox, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	sandboxID := sandbox.PodSandboxId
	t.Logf("RunPodSandbox: %v", time.Since(start))

	created, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: sandboxID,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "hello"},
			Image:    &runtimeapi.ImageSpec{Image: localimages.BusyboxName},
			Command:  []string{"sh", "-c", "echo hello; exit 3"},
			LogPath:  "hello/0.log",
		},
		SandboxConfig: sandboxConfig,
	})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	containerID := created.ContainerId
	if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: containerID}); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	t.Logf("sandbox, create and start: %v", time.Since(start))

	status := waitExited(ctx, t, rt, containerID)
	if status.ExitCode != 3 {
		t.Errorf("exit code %d (reason %q, message %q), want 3", status.ExitCode, status.Reason, status.Message)
	}
	logPath := filepath.Join(logDir, "hello", "0.log")
	if status.LogPath != logPath {
		t.Errorf("status log path %q, want %q", status.LogPath, logPath)
	}
	logData, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("read CRI log: %v", err)
	}
	// CRI log lines are "TIMESTAMP STREAM TAG MESSAGE".
	if !strings.Contains(string(logData), " stdout F hello\n") {
		t.Errorf("CRI log %s = %q, want a stdout line \"hello\"", logPath, logData)
	}

	if _, err := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: containerID, Timeout: 5}); err != nil {
		t.Errorf("StopContainer: %v", err)
	}
	if _, err := rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: containerID}); err != nil {
		t.Errorf("RemoveContainer: %v", err)
	}
	if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sandboxID}); err != nil {
		t.Errorf("StopPodSandbox: %v", err)
	}
	if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sandboxID}); err != nil {
		t.Errorf("RemovePodSandbox: %v", err)
	}
	left, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		t.Fatalf("ListPodSandbox: %v", err)
	}
	if n := len(left.Items); n != 0 {
		t.Errorf("%d sandboxes left after RemovePodSandbox", n)
	}
}

// waitExited polls ContainerStatus until the container has exited.
func waitExited(ctx context.Context, t *testing.T, rt runtimeapi.RuntimeServiceClient, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
		if err != nil {
			t.Fatalf("ContainerStatus: %v", err)
		}
		if resp.Status.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			return resp.Status
		}
		select {
		case <-ctx.Done():
			t.Fatalf("container %s still %v: %v", id, resp.Status.State, ctx.Err())
		case <-tick.C:
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
