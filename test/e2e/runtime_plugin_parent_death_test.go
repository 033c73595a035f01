package e2e

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestRuntimePluginEndsWithKilledHost SIGKILLs the host: its runtime
// plugin ends with it (a parent-death signal) instead of running on until
// the next host start reaps it, and the pod's container keeps running.
func TestRuntimePluginEndsWithKilledHost(t *testing.T) {
	h := startPodHost(t)
	h.apply(busyPod("stays", v1.RestartPolicyAlways, sh("app", "while true; do sleep 1; done")))
	pod := h.waitPod("stays", 60*time.Second, "running", running)
	plugin, _ := h.plugin()
	if plugin.PID == 0 || !processAlive(plugin.PID) {
		t.Fatalf("runtime plugin: %+v; want a running process", plugin)
	}

	h.kill()

	poll(t, 5*time.Second, func() bool { return !processAlive(plugin.PID) },
		func() string {
			return fmt.Sprintf("runtime plugin %d still runs after its host was killed", plugin.PID)
		})
	cs := h.criContainers(string(pod.UID))
	if len(cs) != 1 || cs[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("pod's containers after the host and its plugin died: %v; want one running", cs)
	}
}
