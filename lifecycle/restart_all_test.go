package lifecycle_test

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/podhost/podhost/lifecycle"
)

func restartAllRule(codes ...int32) []v1.ContainerRestartRule {
	return []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: codes}}}
}

// restartAllPod is the upstream spec's pod: an init container, a sidecar,
// a source container whose exit 42 restarts all, and a plain container,
// under restartPolicy Never.
func restartAllPod() *v1.Pod {
	pod := apiPod("1", "p")
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.InitContainers = []v1.Container{
		{Name: "init"},
		{Name: "sidecar", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways)},
	}
	pod.Spec.Containers = []v1.Container{
		{Name: "source", RestartPolicy: ptr.To(v1.ContainerRestartPolicyNever), RestartPolicyRules: restartAllRule(42)},
		{Name: "regular"},
	}
	return pod
}

func TestRestartAllRules(t *testing.T) {
	pod := restartAllPod()
	source := &pod.Spec.Containers[0]
	if !lifecycle.RestartsAll(source, 42) || lifecycle.RestartsAll(source, 1) || lifecycle.RestartsAll(&pod.Spec.Containers[1], 42) {
		t.Errorf("RestartsAll: want true only for source's exit 42")
	}
	if !lifecycle.ContainerRestarts(pod, source, 42) {
		t.Errorf("ContainerRestarts(source, 42) = false; want true: it runs again with the pod")
	}
	if lifecycle.ContainerRestarts(pod, source, 1) {
		t.Errorf("ContainerRestarts(source, 1) = true; want false (its policy is Never)")
	}
	if !lifecycle.CouldRestartAll(pod) || lifecycle.CouldRestartAll(apiPod("2", "q")) {
		t.Errorf("CouldRestartAll: want true only for the pod with the rule")
	}
	// Any container of a pod that can restart all may run again: its probe
	// worker must not stop.
	if lifecycle.NeverRestarts(pod, &pod.Spec.Containers[1]) {
		t.Errorf("NeverRestarts(regular) = true in a pod that can restart all")
	}
	init := v1.Container{Name: "i", RestartPolicy: ptr.To(v1.ContainerRestartPolicyNever), RestartPolicyRules: restartAllRule(42)}
	for _, tt := range []struct {
		exit int32
		want bool
	}{{42, true}, {1, false}} {
		if got := lifecycle.InitContainerRestarts(pod, &init, tt.exit); got != tt.want {
			t.Errorf("InitContainerRestarts(exit %d) = %v; want %v", tt.exit, got, tt.want)
		}
	}
	onFailure := v1.Container{Name: "i", RestartPolicy: ptr.To(v1.ContainerRestartPolicyOnFailure)}
	if !lifecycle.InitContainerRestarts(pod, &onFailure, 1) {
		t.Errorf("an init container with restartPolicy OnFailure does not restart in a Never pod")
	}
	if !lifecycle.InitContainerRestarts(apiPod("2", "q"), &v1.Container{Name: "i"}, 1) || lifecycle.InitContainerRestarts(pod, &v1.Container{Name: "i"}, 1) {
		t.Errorf("an init container without a policy does not follow the pod's")
	}
}

func condition(s v1.PodStatus, t v1.PodConditionType) *v1.PodCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

func TestRestartAllStatus(t *testing.T) {
	at := time.Unix(100, 0)
	cs := func(id, name string, state lifecycle.ContainerState, exit int32, restarts int32, created int) lifecycle.ContainerStatus {
		return lifecycle.ContainerStatus{ID: id, Name: name, State: state, ExitCode: exit, RestartCount: restarts,
			CreatedAt: at.Add(time.Duration(created) * time.Second), FinishedAt: at.Add(time.Duration(created+1) * time.Second)}
	}
	run1 := []lifecycle.ContainerStatus{
		cs("i1", "init", lifecycle.ContainerExited, 0, 0, 1),
		cs("s1", "sidecar", lifecycle.ContainerRunning, 0, 0, 2),
		cs("a1", "source", lifecycle.ContainerExited, 42, 0, 3),
		cs("r1", "regular", lifecycle.ContainerRunning, 0, 0, 3),
	}
	t.Run("a container exited with the rule: condition true, the pod keeps running", func(t *testing.T) {
		pod := restartAllPod()
		s := lifecycle.GeneratePodStatus(pod, &lifecycle.PodStatus{ID: "1", SandboxReady: true, ContainerStatuses: run1}, v1.PodStatus{}, false, nil)
		c := condition(s, v1.AllContainersRestarting)
		if c == nil || c.Status != v1.ConditionTrue || c.Reason != lifecycle.ReasonRestartAllContainersStarted {
			t.Errorf("AllContainersRestarting %+v; want True, %s", c, lifecycle.ReasonRestartAllContainersStarted)
		}
		if s.Phase != v1.PodRunning {
			t.Errorf("phase %s; want Running", s.Phase)
		}
	})
	t.Run("the run ended: reset containers wait, counted as restarted, with their end as last termination", func(t *testing.T) {
		pod := restartAllPod()
		var reset []lifecycle.ContainerStatus
		for _, c := range run1 {
			if c.State == lifecycle.ContainerRunning {
				c.State, c.ExitCode = lifecycle.ContainerExited, 137
			}
			c.ResetByRestartAll = true
			reset = append(reset, c)
		}
		reset = append(reset, cs("i2", "init", lifecycle.ContainerRunning, 0, 1, 10))
		old := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodInitialized, Status: v1.ConditionTrue}}}
		s := lifecycle.GeneratePodStatus(pod, &lifecycle.PodStatus{ID: "1", SandboxReady: true, ContainerStatuses: reset}, old, false, nil)
		if c := condition(s, v1.AllContainersRestarting); c == nil || c.Status != v1.ConditionFalse {
			t.Errorf("AllContainersRestarting %+v; want False", c)
		}
		for _, c := range append(s.InitContainerStatuses, s.ContainerStatuses...) {
			if c.RestartCount != 1 || c.LastTerminationState.Terminated == nil {
				t.Errorf("%s: restarts %d, last termination %+v; want 1 and one", c.Name, c.RestartCount, c.LastTerminationState)
			}
			if c.Name == "init" {
				if c.State.Running == nil {
					t.Errorf("init: state %+v; want running", c.State)
				}
				continue
			}
			if w := c.State.Waiting; w == nil || w.Reason != lifecycle.ReasonRestartingAllContainers {
				t.Errorf("%s: state %+v; want waiting %s", c.Name, c.State, lifecycle.ReasonRestartingAllContainers)
			}
		}
		if s.Phase == v1.PodFailed || s.Phase == v1.PodSucceeded {
			t.Errorf("phase %s; want the pod not finished", s.Phase)
		}
		if c := condition(s, v1.PodInitialized); c == nil || c.Status != v1.ConditionTrue {
			t.Errorf("Initialized %+v; want it to stay True", c)
		}
	})
	t.Run("an init container exited with the rule does not fail a Never pod", func(t *testing.T) {
		pod := restartAllPod()
		pod.Spec.InitContainers[0].RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever)
		pod.Spec.InitContainers[0].RestartPolicyRules = restartAllRule(42)
		rs := &lifecycle.PodStatus{ID: "1", SandboxReady: true, ContainerStatuses: []lifecycle.ContainerStatus{cs("i1", "init", lifecycle.ContainerExited, 42, 0, 1)}}
		s := lifecycle.GeneratePodStatus(pod, rs, v1.PodStatus{}, false, nil)
		if s.Phase != v1.PodPending {
			t.Errorf("phase %s; want Pending", s.Phase)
		}
		rs.ContainerStatuses[0].ExitCode = 1
		if s := lifecycle.GeneratePodStatus(pod, rs, v1.PodStatus{}, false, nil); s.Phase != v1.PodFailed {
			t.Errorf("exit 1: phase %s; want Failed", s.Phase)
		}
	})
	t.Run("a pod without the rule has no such condition", func(t *testing.T) {
		s := lifecycle.GeneratePodStatus(apiPod("2", "q"), &lifecycle.PodStatus{ID: "2"}, v1.PodStatus{}, false, nil)
		if c := condition(s, v1.AllContainersRestarting); c != nil {
			t.Errorf("AllContainersRestarting %+v; want none", c)
		}
	})
	t.Run("a container restarted alone reports the end of its previous instance", func(t *testing.T) {
		rs := &lifecycle.PodStatus{ID: "2", SandboxReady: true, ContainerStatuses: []lifecycle.ContainerStatus{
			cs("c0", "c1", lifecycle.ContainerExited, 3, 0, 1), cs("c1", "c1", lifecycle.ContainerRunning, 0, 1, 5)}}
		c := lifecycle.GeneratePodStatus(apiPod("2", "q"), rs, v1.PodStatus{}, false, nil).ContainerStatuses[0]
		if lt := c.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 3 || lt.ContainerID != "c0" {
			t.Errorf("last termination %+v; want c0's exit 3", c.LastTerminationState)
		}
	})
}

func TestRestartAllStateTransitionAccepted(t *testing.T) {
	e := newStatusEnv()
	pod := restartAllPod()
	pod.Spec.InitContainers = nil
	before := v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{terminated("source", 42), terminated("regular", 137)}}
	e.m.SetPodStatus(pod, before)
	after := v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("source", "a2"), running("regular", "r2")}}
	e.m.SetPodStatus(pod, after)
	got, _ := e.m.PodStatus(pod.UID)
	if len(got.ContainerStatuses) != 2 || got.ContainerStatuses[1].State.Running == nil {
		t.Errorf("status %+v; want the containers running again after RestartAllContainers", got.ContainerStatuses)
	}
}
