package e2e

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/images/localimages"
)

// ephemeralStatus is the pod's status of the named ephemeral container, or
// nil.
func ephemeralStatus(p *v1.Pod, name string) *v1.ContainerStatus {
	for i := range p.Status.EphemeralContainerStatuses {
		if p.Status.EphemeralContainerStatuses[i].Name == name {
			return &p.Status.EphemeralContainerStatuses[i]
		}
	}
	return nil
}

// TestKubeDebug runs `kubectl debug --target` against a podhost node
// through a real API server: the ephemeral container starts in the
// running pod, sees the target container's processes, is reported in
// ephemeralContainerStatuses, answers exec and logs, is not restarted
// once it exits, and goes with the pod.
func TestKubeDebug(t *testing.T) {
	k := startKubeHost(t)
	k.create(kubePod("shell", v1.RestartPolicyAlways, sh("app", `trap "exit 0" TERM; while true; do sleep 1; done`)))
	k.waitAPIRunning("shell", 90*time.Second)

	if out, errOut, err := k.kubectl(t, "", nil, "debug", "shell", "--image="+localimages.BusyboxName, "--image-pull-policy=Never",
		"--target=app", "-c", "dbg", "--", "sh", "-c", "ps; echo debugging; sleep 3600"); err != nil {
		t.Fatalf("kubectl debug: %v\n%s%s", err, out, errOut)
	}
	p := k.waitAPIPod("shell", 60*time.Second, "ephemeral container dbg running", func(p *v1.Pod) bool {
		st := ephemeralStatus(p, "dbg")
		return st != nil && st.State.Running != nil
	})
	if app := containerStatus(p, "app"); app == nil || app.State.Running == nil || app.RestartCount != 0 {
		t.Errorf("the target container was disturbed: %+v", app)
	}
	poll(t, 30*time.Second, func() bool {
		out, _, err := k.kubectl(t, "", nil, "logs", "shell", "-c", "dbg")
		return err == nil && strings.Contains(out, "debugging")
	}, func() string { return "kubectl logs -c dbg never showed the container's output" })
	logs, _, _ := k.kubectl(t, "", nil, "logs", "shell", "-c", "dbg")
	// ps in the target's PID namespace lists the target's loop.
	if !strings.Contains(logs, "while true; do sleep 1; done") {
		t.Errorf("the ephemeral container does not see the target's processes; ps printed:\n%s", logs)
	}
	if out, errOut, err := k.kubectl(t, "", nil, "exec", "shell", "-c", "dbg", "--", "echo", "marco"); err != nil || out != "marco\n" {
		t.Errorf("exec into the ephemeral container: %q %q (%v)", out, errOut, err)
	}

	// One that exits is not restarted.
	if out, errOut, err := k.kubectl(t, "", nil, "debug", "shell", "--image="+localimages.BusyboxName, "--image-pull-policy=Never",
		"-c", "once", "--", "sh", "-c", "exit 3"); err != nil {
		t.Fatalf("kubectl debug: %v\n%s%s", err, out, errOut)
	}
	p = k.waitAPIPod("shell", 60*time.Second, "ephemeral container once exited 3", func(p *v1.Pod) bool {
		st := ephemeralStatus(p, "once")
		return st != nil && st.State.Terminated != nil && st.State.Terminated.ExitCode == 3
	})
	// The exec above and this one are syncs of the pod after the exit.
	k.kubectl(t, "", nil, "exec", "shell", "-c", "app", "--", "true")
	var onceContainers int
	for _, c := range k.criContainers(string(p.UID)) {
		if c.Metadata.Name == "once" {
			onceContainers++
		}
	}
	if st := ephemeralStatus(p, "once"); onceContainers != 1 || st.RestartCount != 0 {
		t.Errorf("ephemeral container once: %d containers in the runtime, restartCount %d; want 1 and 0", onceContainers, st.RestartCount)
	}
	if p.Status.Phase != v1.PodRunning {
		t.Errorf("an ephemeral container's exit changed the pod's phase to %s", p.Status.Phase)
	}
}
