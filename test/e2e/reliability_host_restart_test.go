package e2e

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/images/localimages"
)

// TestReliabilityHostKilled SIGKILLs the host and starts it again on the
// same root dir: running pods are adopted without a container restart,
// a runtime pod that no config owns is terminated and counted in
// kubelet_orphaned_runtime_pods_total, and a terminal pod stays terminal.
func TestReliabilityHostKilled(t *testing.T) {
	h := startPodHost(t)
	h.apply(busyPod("steady", v1.RestartPolicyAlways, sh("app", "echo up; while true; do sleep 1; done")))
	h.apply(busyPod("failed", v1.RestartPolicyNever, sh("app", "exit 3")))
	steady := h.waitPod("steady", 60*time.Second, "running", running)
	failed := h.waitPhase("failed", v1.PodFailed, 60*time.Second)
	before := h.criContainers(string(steady.UID))
	if len(before) != 1 || before[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("steady before the kill: %v; want one running container", before)
	}

	h.kill()

	// A pod podhost made (its labels) that no config owns.
	ctx := t.Context()
	orphanUID := "00000000-0000-0000-0000-0000000000aa"
	labels := map[string]string{
		runtimemanager.LabelManagedBy: runtimemanager.ManagedByValue, runtimemanager.LabelPodUID: orphanUID,
		runtimemanager.LabelPodNamespace: "default", runtimemanager.LabelPodName: "orphan",
	}
	sbCfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "orphan", Namespace: "default", Uid: orphanUID},
		Labels:   labels,
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
		}},
	}
	sb, err := h.ctrd.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbCfg})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	ctrLabels := map[string]string{runtimemanager.LabelContainerName: "app"}
	for k, v := range labels {
		ctrLabels[k] = v
	}
	ctr, err := h.ctrd.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: sb.PodSandboxId, SandboxConfig: sbCfg,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
			Image:    &runtimeapi.ImageSpec{Image: localimages.BusyboxName},
			Command:  []string{"sleep", "3600"},
			Labels:   ctrLabels,
		},
	})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if _, err := h.ctrd.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: ctr.ContainerId}); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}

	h.start()

	// The killed host's plugin, orphaned in its own session, is killed by
	// the new host before it launches its own.
	h.mu.Lock()
	orphans := append([]int(nil), h.orphans...)
	h.mu.Unlock()
	for _, pid := range orphans {
		poll(t, 30*time.Second, func() bool { return !processAlive(pid) },
			func() string { return fmt.Sprintf("plugin process %d of the killed host still runs", pid) })
	}

	// The orphan is terminated: its container stops and its sandbox is
	// stopped or removed.
	poll(t, 90*time.Second, func() bool {
		for _, c := range h.criContainers(orphanUID) {
			if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				return false
			}
		}
		sbs, err := criSandboxes(ctx, h.ctrd, map[string]string{runtimemanager.LabelPodUID: orphanUID})
		if err != nil {
			return false
		}
		for _, s := range sbs {
			if s.State == runtimeapi.PodSandboxState_SANDBOX_READY {
				return false
			}
		}
		return true
	}, func() string { return "the orphan pod still runs\n" + h.logTail() })
	var orphaned float64
	poll(t, 30*time.Second, func() bool {
		orphaned, err = h.metric("kubelet_orphaned_runtime_pods_total")
		return err == nil && orphaned >= 1
	}, func() string {
		return fmt.Sprintf("kubelet_orphaned_runtime_pods_total = %v, %v; want >= 1", orphaned, err)
	})

	// The running pod was adopted: same container, never restarted.
	now := h.waitPod("steady", 60*time.Second, "running", running)
	if c := containerStatus(now, "app"); c == nil || c.RestartCount != 0 || c.ContainerID != before[0].Id {
		t.Errorf("steady after the restart: %+v; want container %s with restartCount 0", c, before[0].Id)
	}
	after := h.criContainers(string(steady.UID))
	if len(after) != 1 || after[0].Id != before[0].Id || after[0].StartedAt != before[0].StartedAt ||
		after[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("steady's containers after the restart: %v; want only %s, running, started at %d", after, before[0].Id, before[0].StartedAt)
	}
	sbs, err := criSandboxes(ctx, h.ctrd, map[string]string{runtimemanager.LabelPodUID: string(steady.UID)})
	if err != nil || len(sbs) != 1 {
		t.Errorf("steady's sandboxes after the restart: %v, %v; want exactly one", sbs, err)
	}

	// The terminal pod stays terminal and its container never reran.
	f := h.waitPhase("failed", v1.PodFailed, 30*time.Second)
	if c := containerStatus(f, "app"); c == nil || c.State.Terminated == nil || c.State.Terminated.ExitCode != 3 || c.RestartCount != 0 {
		t.Errorf("failed pod after the restart: %+v; want terminated with exit code 3, no restart", c)
	}
	for _, c := range h.criContainers(string(failed.UID)) {
		if c.Metadata.Attempt != 0 || c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Errorf("failed pod's container %s attempt %d is %s after the restart", c.Id, c.Metadata.Attempt, c.State)
		}
	}
	// The new host still runs new pods.
	h.apply(busyPod("after", v1.RestartPolicyAlways, sh("app", "sleep 3600")))
	h.waitPod("after", 60*time.Second, "running", running)
}
