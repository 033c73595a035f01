package e2e

import (
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/test/criproxy"
)

// TestRuntimePluginKilledAfterTaskCreated places the runtime plugin's death
// where TestRuntimePluginKilledDuringStarts only sometimes lands it: after
// containerd created the container's task and before its start finished.
// A proxy in front of containerd holds the pod's StartContainer; meanwhile
// containerd creates the task, the plugin is SIGKILLed, and the held call
// then reaches CRI, whose start fails with the task left CREATED and the
// container exited 128 (StartError), as a start cancelled at that point
// leaves them. containerd refuses to remove a container with a task; the
// pod must run all the same, restart count 0, with one container.
func TestRuntimePluginKilledAfterTaskCreated(t *testing.T) {
	var proxy *criproxy.Proxy
	h := startPodHostVia(t, "", viaProxy(t, &proxy))
	plugin := h.waitPlugin(func(p localapi.PluginInfo) bool { return p.Ready && p.PID != 0 })
	held := proxy.Hold("StartContainer")
	h.apply(busyPod("cut", v1.RestartPolicyNever, sh("app", "while true; do sleep 1; done")))
	select {
	case <-held.Arrived():
	case <-time.After(time.Minute):
		t.Fatalf("no StartContainer arrived\n%s", h.logTail())
	}
	managed := map[string]string{runtimemanager.LabelManagedBy: runtimemanager.ManagedByValue}
	cs, err := criContainerStatuses(t.Context(), h.ctrd, managed)
	if err != nil || len(cs) != 1 || cs[0].State != runtimeapi.ContainerState_CONTAINER_CREATED {
		t.Fatalf("containers while the start is held: %v, %v; want one created", cs, err)
	}
	first := cs[0].Id
	if err := h.ctrd.CreateTask(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(plugin.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill runtime plugin (pid %d): %v", plugin.PID, err)
	}
	held.Release()
	<-held.Done()
	if held.Err() == nil {
		t.Fatal("CRI started the container although its task existed: the test did not make the interleaving")
	}
	t.Logf("the held start: %v", held.Err())

	p := h.waitPod("cut", time.Minute, "running, restart count 0", func(p *v1.Pod) bool {
		c := containerStatus(p, "app")
		return c != nil && c.State.Running != nil
	})
	if c := containerStatus(p, "app"); c.RestartCount != 0 {
		t.Errorf("restart count %d; want 0 (a plugin restart is no container restart)", c.RestartCount)
	}
	cs, err = criContainerStatuses(t.Context(), h.ctrd, managed)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Id == first || cs[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING || cs[0].Metadata.Attempt != 0 {
		t.Errorf("containers in containerd: %v; want one running at attempt 0, the cut one removed", cs)
	}
}
