package e2e

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestReadinessProbeFlipsReady runs busybox httpd in a host-network pod
// with an httpGet readiness probe on a named port: the page is missing for
// the first seconds (404), so the running container is not ready and the
// pod's Ready and ContainersReady are False, with the kubelet's reason
// ContainersNotReady naming the container, and an Unhealthy event; once
// the page exists the probe succeeds and both become True.
func TestReadinessProbeFlipsReady(t *testing.T) {
	h := startPodHost(t)
	port := freePort(t)
	c := sh("web", fmt.Sprintf(`mkdir -p /www; httpd -f -p 127.0.0.1:%d -h /www & sleep 4; echo ok > /www/healthz; wait`, port))
	c.Ports = []v1.ContainerPort{{Name: "http", ContainerPort: port}}
	c.ReadinessProbe = &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
		PeriodSeconds: 1,
	}
	h.apply(busyPod("ready", v1.RestartPolicyAlways, c))

	notReady := h.waitPod("ready", 60*time.Second, "running but not ready", func(p *v1.Pod) bool {
		cs := containerStatus(p, "web")
		return running(p) && cs != nil && !cs.Ready
	})
	if got := podCondition(notReady, v1.PodReady); got != v1.ConditionFalse {
		t.Fatalf("Ready of a running pod whose readiness probe has not passed: %q; want False\n%s", got, podStatusString(notReady))
	}
	if got := podCondition(notReady, v1.ContainersReady); got != v1.ConditionFalse {
		t.Fatalf("ContainersReady before the probe passed: %q; want False", got)
	}
	for _, typ := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
		c := findPodCondition(notReady, typ)
		if c.Reason != "ContainersNotReady" || c.Message != "containers with unready status: [web]" {
			t.Errorf("%s before the probe passed: reason %q message %q; want ContainersNotReady, containers with unready status: [web]", typ, c.Reason, c.Message)
		}
	}
	ready := h.waitPod("ready", 60*time.Second, "Ready True", func(p *v1.Pod) bool { return podCondition(p, v1.PodReady) == v1.ConditionTrue })
	if cs := containerStatus(ready, "web"); cs == nil || !cs.Ready || cs.Started == nil || !*cs.Started {
		t.Fatalf("container once Ready: %+v; want ready and started", cs)
	}
	if got := podCondition(ready, v1.ContainersReady); got != v1.ConditionTrue {
		t.Fatalf("ContainersReady once ready: %q; want True", got)
	}
	if c := findPodCondition(ready, v1.PodReady); c.Reason != "" || c.Message != "" {
		t.Errorf("Ready True keeps reason %q message %q", c.Reason, c.Message)
	}
	if evs := h.events("ready"); !hasEvent(evs, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 404") {
		t.Errorf("no Unhealthy event for the 404s:\n%s", eventsString(evs))
	}
	out, err := h.hostCLI(t.Context(), "pods", "get", "default/ready")
	if err != nil {
		t.Fatalf("pods get: %v\n%s", err, out)
	}
	for _, want := range []string{"type: Ready", "type: ContainersReady", "status: \"True\""} {
		if !containsLine(out, want) {
			t.Errorf("pods get does not show %q:\n%s", want, out)
		}
	}
}
