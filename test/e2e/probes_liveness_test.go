package e2e

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestLivenessProbeRestartsContainer gives a container an exec liveness
// probe that passes while /tmp/healthy exists; the container removes it
// after a few seconds and ignores SIGTERM. The probe fails, the container
// is killed at the probe's grace period and restarted under the restart
// policy: restartCount 1, and the event names the liveness probe.
func TestLivenessProbeRestartsContainer(t *testing.T) {
	h := startPodHost(t)
	c := sh("app", `touch /tmp/healthy; sleep 3; rm /tmp/healthy; while true; do sleep 0.2; done`)
	grace := int64(1)
	c.LivenessProbe = &v1.Probe{
		ProbeHandler:                  v1.ProbeHandler{Exec: execCmd("test -e /tmp/healthy")},
		PeriodSeconds:                 1,
		FailureThreshold:              2,
		TerminationGracePeriodSeconds: &grace,
	}
	h.apply(busyPod("live", v1.RestartPolicyAlways, c))
	up := h.waitPod("live", 60*time.Second, "running", running)
	first := containerStatus(up, "app").ContainerID

	restarted := h.waitPod("live", 90*time.Second, "restarted once", func(p *v1.Pod) bool {
		cs := containerStatus(p, "app")
		return cs != nil && cs.RestartCount >= 1
	})
	cs := containerStatus(restarted, "app")
	if cs.RestartCount != 1 {
		t.Fatalf("restartCount when first seen restarted: %d; want 1\n%s", cs.RestartCount, podStatusString(restarted))
	}
	if cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ContainerID == "" && first == "" {
		t.Errorf("no last termination state: %+v", cs.LastTerminationState)
	}
	evs := h.events("live")
	if !hasEvent(evs, "Killing", "Container app failed liveness probe, will be restarted") {
		t.Errorf("no liveness Killing event:\n%s", eventsString(evs))
	}
	if !hasEvent(evs, "Unhealthy", "Liveness probe failed") {
		t.Errorf("no Unhealthy event:\n%s", eventsString(evs))
	}
	if n, err := h.labeledMetric("prober_probe_total", map[string]string{"probe_type": "Liveness", "result": "failed", "container": "app", "pod": "live"}); err != nil || n < 2 {
		t.Errorf("prober_probe_total of failed liveness probes: %v (%v); want at least 2", n, err)
	}
}
