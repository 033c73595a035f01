package e2e

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestPodActiveDeadline: a pod with activeDeadlineSeconds runs until the
// deadline, then is Failed with the kubelet's reason and message, its
// container stopped; a pod without one keeps running beside it.
func TestPodActiveDeadline(t *testing.T) {
	h := startPodHost(t)
	pod := busyPod("deadline", v1.RestartPolicyAlways, sh("app", `trap "exit 0" TERM; while true; do sleep 1; done`))
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](3)
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](5)
	h.apply(pod)
	h.apply(busyPod("steady", v1.RestartPolicyAlways, sh("app", `trap "exit 0" TERM; while true; do sleep 1; done`)))

	p := h.waitPhase("deadline", v1.PodFailed, 90*time.Second)
	if p.Status.Reason != "DeadlineExceeded" || p.Status.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("reason %q message %q; want the kubelet's DeadlineExceeded", p.Status.Reason, p.Status.Message)
	}
	if p.Status.StartTime == nil {
		t.Fatal("no start time")
	}
	// The status turns Failed first; the worker then stops the pod.
	poll(t, 30*time.Second, func() bool {
		for _, c := range h.criContainers(string(p.UID)) {
			if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				return false
			}
		}
		return true
	}, func() string { return "the container still runs after the deadline" })
	if !hasEvent(h.events("deadline"), "DeadlineExceeded", "Pod was active on the node longer than the specified deadline") {
		t.Errorf("no DeadlineExceeded event:\n%s", eventsString(h.events("deadline")))
	}
	if s, ok := h.get("steady"); !ok || s.Status.Phase != v1.PodRunning {
		t.Errorf("the pod without a deadline: %+v", s)
	}
}
