package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestPodRestartPolicyBackOff checks that OnFailure and Always restart a
// container that exits, with a crash back-off that grows (CrashLoopBackOff
// starts at 10 s and doubles), that restartCount grows, and that BackOff
// events are recorded.
func TestPodRestartPolicyBackOff(t *testing.T) {
	h := startPodHost(t)
	h.apply(busyPod("onfailure", v1.RestartPolicyOnFailure, sh("app", "echo try; exit 1")))
	h.apply(busyPod("always", v1.RestartPolicyAlways, sh("app", "echo done; exit 0")))
	for _, name := range []string{"onfailure", "always"} {
		pod := h.waitPod(name, 90*time.Second, "restartCount 2", func(p *v1.Pod) bool {
			c := containerStatus(p, "app")
			return c != nil && c.RestartCount >= 2
		})
		if pod.Status.Phase != v1.PodRunning && pod.Status.Phase != v1.PodPending {
			t.Errorf("%s: phase %s while restarting; want Running or Pending", name, pod.Status.Phase)
		}
		// The runtime's attempts: started one after the other, each after
		// the previous finished, with growing gaps.
		var attempts []*runtimeapi.ContainerStatus
		poll(t, 30*time.Second, func() bool {
			attempts = nil
			for _, c := range h.criContainers(string(pod.UID)) {
				if c.State == runtimeapi.ContainerState_CONTAINER_EXITED && c.Metadata.Attempt <= 1 || c.Metadata.Attempt == 2 && c.StartedAt != 0 {
					attempts = append(attempts, c)
				}
			}
			return len(attempts) == 3
		}, func() string { return fmt.Sprintf("%s: attempts 0 to 2 not all in the runtime: %v", name, attempts) })
		slices.SortFunc(attempts, func(a, b *runtimeapi.ContainerStatus) int { return int(a.Metadata.Attempt) - int(b.Metadata.Attempt) })
		gap1 := time.Duration(attempts[1].StartedAt - attempts[0].FinishedAt)
		gap2 := time.Duration(attempts[2].StartedAt - attempts[1].FinishedAt)
		t.Logf("%s: back-off gaps %s, %s", name, gap1, gap2)
		if gap1 < 5*time.Second || gap2 <= gap1 {
			t.Errorf("%s: gaps between restarts %s then %s; want a back-off of about 10 s that grows", name, gap1, gap2)
		}
		if c := attempts[0]; c.ExitCode != map[string]int32{"onfailure": 1, "always": 0}[name] {
			t.Errorf("%s: first attempt exit code %d", name, c.ExitCode)
		}
		evs := h.events(name)
		if !hasEvent(evs, "BackOff", "Back-off restarting failed container app") || !hasEvent(evs, "Started", "Started container app") {
			t.Errorf("%s: events lack BackOff or Started:\n%s", name, eventsString(evs))
		}
	}
	// OnFailure stops restarting once the container succeeds.
	h.apply(busyPod("onfailure-ok", v1.RestartPolicyOnFailure, sh("app", "exit 0")))
	pod := h.waitPhase("onfailure-ok", v1.PodSucceeded, 60*time.Second)
	if c := containerStatus(pod, "app"); c == nil || c.RestartCount != 0 {
		t.Errorf("onfailure-ok: %+v; want no restart", c)
	}
}
