package crisetup

import (
	"context"
	"encoding/json"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/images/localimages"
)

// RunSleeper starts a host-network sandbox named name with a busybox
// container that sleeps until killed, and returns the sandbox's ID and the
// PID of its pause process. Tests of teardown use it.
func (c *Containerd) RunSleeper(ctx context.Context, name string) (string, int, error) {
	config := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: name + "-uid"},
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
		}},
	}
	sb, err := c.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: config})
	if err != nil {
		return "", 0, fmt.Errorf("RunPodSandbox: %w", err)
	}
	ctr, err := c.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: sb.PodSandboxId, SandboxConfig: config,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "sleeper"},
			Image:    &runtimeapi.ImageSpec{Image: localimages.BusyboxName},
			Command:  []string{"sleep", "3600"},
		},
	})
	if err != nil {
		return "", 0, fmt.Errorf("CreateContainer: %w", err)
	}
	if _, err := c.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: ctr.ContainerId}); err != nil {
		return "", 0, fmt.Errorf("StartContainer: %w", err)
	}
	st, err := c.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.PodSandboxId, Verbose: true})
	if err != nil {
		return "", 0, fmt.Errorf("PodSandboxStatus: %w", err)
	}
	var info struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(st.Info["info"]), &info); err != nil || info.Pid <= 0 {
		return "", 0, fmt.Errorf("sandbox pid from verbose status: %v (info %q)", err, st.Info["info"])
	}
	return sb.PodSandboxId, info.Pid, nil
}
