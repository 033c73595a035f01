package e2e

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestPodGracePeriod deletes a pod with two containers and a grace period
// of 8 s: one traps SIGTERM and exits on it, the other (PID 1 without a
// handler, so SIGTERM does nothing) is killed at the deadline.
func TestPodGracePeriod(t *testing.T) {
	const grace = 8 * time.Second
	h := startPodHost(t)
	pod := busyPod("graceful", v1.RestartPolicyAlways,
		sh("trapper", `trap 'echo got TERM; sleep 1; exit 0' TERM; echo ready; while true; do sleep 0.2; done`),
		sh("ignorer", `trap '' TERM; echo ready; while true; do sleep 0.2; done`))
	g := int64(grace / time.Second)
	pod.Spec.TerminationGracePeriodSeconds = &g
	h.apply(pod)
	up := h.waitPod("graceful", 60*time.Second, "running", running)
	pids := map[string]int{}
	for _, c := range up.Status.ContainerStatuses {
		pids[c.Name] = h.containerPID(c.ContainerID)
	}
	// Let both shells reach their loops (and install their traps).
	for _, name := range []string{"trapper", "ignorer"} {
		poll(t, 30*time.Second, func() bool {
			out, _ := h.hostCLI(t.Context(), "logs", "default/graceful", "-c", name)
			return out == "ready\n"
		}, func() string { return name + " never printed ready" })
	}

	deleted := time.Now()
	h.delete("graceful", nil)
	gone := map[string]time.Duration{}
	poll(t, grace+60*time.Second, func() bool {
		for name, pid := range pids {
			if _, ok := gone[name]; !ok && !processAlive(pid) {
				gone[name] = time.Since(deleted)
			}
		}
		return len(gone) == len(pids)
	}, func() string { return fmt.Sprintf("containers still running: gone %v\n%s", gone, h.logTail()) })
	t.Logf("after the delete: trapper gone in %s, ignorer in %s", gone["trapper"], gone["ignorer"])
	if gone["trapper"] > grace/2 {
		t.Errorf("the container that traps SIGTERM ran %s after the delete; want it to exit on SIGTERM well within %s", gone["trapper"], grace)
	}
	if gone["ignorer"] < grace-time.Second {
		t.Errorf("the container that ignores SIGTERM was killed %s after the delete; want no earlier than the %s grace period", gone["ignorer"], grace)
	}
	if gone["ignorer"] > grace+30*time.Second {
		t.Errorf("the container that ignores SIGTERM was killed %s after the delete; want it killed at the %s deadline", gone["ignorer"], grace)
	}
	h.waitGone("graceful", 60*time.Second)
	evs := h.events("graceful")
	if !hasEvent(evs, "Killing", "Stopping container trapper") || !hasEvent(evs, "Killing", "Stopping container ignorer") {
		t.Errorf("no Killing events for both containers:\n%s", eventsString(evs))
	}
}
