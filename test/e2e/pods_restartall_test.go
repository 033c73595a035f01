package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestPodRestartAllContainers is the upstream RestartAllContainers spec on
// podhost's own harness: in a restartPolicy Never pod, the app container
// source exits 42 under a RestartAllContainers rule; the init container,
// the sidecar, source and the plain container regular all run again, in
// order (init first), with the emptyDir kept (each
// container appends a line to its file there on every run), each counted
// as restarted once with a last termination state; nothing runs a third
// time.
func TestPodRestartAllContainers(t *testing.T) {
	h := startPodHost(t)
	rules := []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	source := sh("source", "echo run >> /data/source; if [ -f /data/restarted ]; then sleep 3600; else touch /data/restarted; exit 42; fi")
	source.RestartPolicy, source.RestartPolicyRules = ptr.To(v1.ContainerRestartPolicyNever), rules
	pod := withEmptyDir(busyPod("restartall", v1.RestartPolicyNever, source, sh("regular", "echo run >> /data/regular; sleep 3600")), "work", "", "")
	side := sh("side", "echo run >> /data/side; sleep 3600")
	side.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
	pod.Spec.InitContainers = []v1.Container{sh("init", "echo run >> /data/init"), side}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		c.Image, c.ImagePullPolicy = pod.Spec.Containers[0].Image, v1.PullNever
		c.VolumeMounts = []v1.VolumeMount{{Name: "work", MountPath: "/data"}}
	}
	h.apply(pod)

	names := []string{"init", "side", "source", "regular"}
	got := h.waitPod("restartall", 120*time.Second, "every container restarted once and running", func(p *v1.Pod) bool {
		for _, n := range names {
			c := containerStatus(p, n)
			if c == nil || c.RestartCount < 1 || c.LastTerminationState.Terminated == nil {
				return false
			}
			if n != "init" && c.State.Running == nil {
				return false
			}
		}
		return true
	})
	for _, n := range names {
		if c := containerStatus(got, n); c.RestartCount != 1 {
			t.Errorf("%s: restartCount %d; want 1\n%s", n, c.RestartCount, podStatusString(got))
		}
	}
	if c := containerStatus(got, "source").LastTerminationState.Terminated; c.ExitCode != 42 {
		t.Errorf("source's last termination %+v; want exit 42", c)
	}
	if got.Status.Phase != v1.PodRunning {
		t.Errorf("phase %s; want Running", got.Status.Phase)
	}
	var cond *v1.PodCondition
	for i := range got.Status.Conditions {
		if got.Status.Conditions[i].Type == v1.AllContainersRestarting {
			cond = &got.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != v1.ConditionFalse {
		t.Errorf("AllContainersRestarting %+v; want False once the pod runs again", cond)
	}
	dir := h.emptyDirPath(string(got.UID), "work")
	for _, n := range names {
		b, err := os.ReadFile(dir + "/" + n)
		if err != nil {
			t.Fatalf("the emptyDir lost %s's file: %v", n, err)
		}
		if runs := strings.Count(string(b), "run"); runs != 2 {
			t.Errorf("%s ran %d times; want 2 (the emptyDir kept across the restart)", n, runs)
		}
	}
	evs := h.events("restartall")
	if !hasEvent(evs, "Killing", "RestartAllContainers") {
		t.Errorf("no Killing event for RestartAllContainers:\n%s", eventsString(evs))
	}
}
