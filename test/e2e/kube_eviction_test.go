package e2e

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestKubeLocalStorageEviction: in Kubernetes mode a pod of the API
// server that writes past its ephemeral-storage limit is evicted as the
// kubelet evicts it: the API shows it Failed with reason Evicted and the
// kubelet's message and its containers terminated, with the Evicted
// event; its restartPolicy Always does not bring it back.
func TestKubeLocalStorageEviction(t *testing.T) {
	k := startKubeHost(t)
	k.waitNodeReady(time.Minute)
	const message = "Pod ephemeral local storage usage exceeds the total limit of containers 1Mi. "
	k.create(kubePod("hog", v1.RestartPolicyAlways, withStorageLimit(sh("app",
		`dd if=/dev/zero of=/big bs=1M count=4 && sync; trap "exit 0" TERM; while true; do sleep 1; done`), "1Mi")))
	p := k.waitAPIPod("hog", 2*time.Minute, "Failed and its containers terminated", func(p *v1.Pod) bool {
		if p.Status.Phase != v1.PodFailed || len(p.Status.ContainerStatuses) == 0 {
			return false
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Terminated == nil {
				return false
			}
		}
		return true
	})
	if p.Status.Reason != "Evicted" || p.Status.Message != message {
		t.Errorf("reason %q message %q; want Evicted %q", p.Status.Reason, p.Status.Message, message)
	}
	// The kubelet adds DisruptionTarget for node pressure only
	// (TestKubeNodeMemoryPressureEviction), not for a pod over its limits.
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget {
			t.Errorf("a limit's eviction has the condition %+v; the kubelet sets none", c)
		}
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.RestartCount != 0 {
			t.Errorf("container %s restarted %d times", c.Name, c.RestartCount)
		}
	}
	// Pod events reach the local API's ring; podhost does not send pod
	// events to the API server yet (only the Node's).
	if !hasEvent(k.events("hog"), "Evicted", message) {
		t.Errorf("no Evicted event:\n%s", eventsString(k.events("hog")))
	}
}
