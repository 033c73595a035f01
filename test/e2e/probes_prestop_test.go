package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestPreStopRunsBeforeSIGTERM deletes a pod whose container has a preStop
// hook that writes a file; the container's SIGTERM trap says in its own
// log whether the file was there, so the log shows the order.
func TestPreStopRunsBeforeSIGTERM(t *testing.T) {
	h := startPodHost(t)
	c := sh("app", `trap 'if [ -e /tmp/prestop-done ]; then echo "TERM after preStop"; else echo "TERM before preStop"; fi; sleep 3; exit 0' TERM; echo ready; while true; do sleep 0.2; done`)
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: execCmd(`touch /tmp/prestop-done`)}}
	pod := busyPod("prestop", v1.RestartPolicyAlways, c)
	g := int64(20)
	pod.Spec.TerminationGracePeriodSeconds = &g
	h.apply(pod)
	h.waitPod("prestop", 60*time.Second, "running", running)
	poll(t, 30*time.Second, func() bool {
		out, _ := h.hostCLI(t.Context(), "logs", "default/prestop", "-c", "app")
		return out == "ready\n"
	}, func() string { return "app never printed ready" })

	h.delete("prestop", nil)
	var log string
	poll(t, 30*time.Second, func() bool {
		out, err := h.hostCLI(t.Context(), "logs", "default/prestop", "-c", "app")
		if err == nil {
			log = out
		}
		return strings.Contains(log, "TERM ")
	}, func() string { return fmt.Sprintf("no TERM line in the container's log: %q\n%s", log, h.logTail()) })
	if want := "ready\nTERM after preStop\n"; log != want {
		t.Fatalf("container log: %q; want %q (the hook before the stop signal)", log, want)
	}
	h.waitGone("prestop", 60*time.Second)
}

// TestPreStopPastGracePeriodIsCutOff deletes a pod whose preStop hook
// sleeps far longer than the grace period and whose container ignores
// SIGTERM: the container is killed at the grace period's deadline, not
// when the hook would have ended.
func TestPreStopPastGracePeriodIsCutOff(t *testing.T) {
	const grace = 4 * time.Second
	h := startPodHost(t)
	c := sh("app", `trap '' TERM; echo ready; while true; do sleep 0.2; done`)
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: execCmd(`sleep 120`)}}
	pod := busyPod("slowstop", v1.RestartPolicyAlways, c)
	g := int64(grace / time.Second)
	pod.Spec.TerminationGracePeriodSeconds = &g
	h.apply(pod)
	up := h.waitPod("slowstop", 60*time.Second, "running", running)
	pid := h.containerPID(containerStatus(up, "app").ContainerID)

	deleted := time.Now()
	h.delete("slowstop", nil)
	var gone time.Duration
	poll(t, 120*time.Second, func() bool {
		if !processAlive(pid) {
			gone = time.Since(deleted)
			return true
		}
		return false
	}, func() string { return "container still running\n" + h.logTail() })
	t.Logf("container gone %s after the delete (grace %s, preStop sleeps 120 s)", gone, grace)
	if gone < grace-time.Second {
		t.Errorf("container killed after %s; want no earlier than the %s grace period", gone, grace)
	}
	if gone > grace+15*time.Second {
		t.Errorf("container killed after %s; want it killed at the %s deadline, not when the 120 s preStop ends", gone, grace)
	}
}
