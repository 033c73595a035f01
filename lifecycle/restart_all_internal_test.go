package lifecycle

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestRestartAllKeepsInitializedAfterProbes: the probes' refresh of the
// readiness conditions keeps Initialized True while the init containers of
// a pod restarted by RestartAllContainers run again, as generation does.
func TestRestartAllKeepsInitializedAfterProbes(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init"}},
		Containers: []v1.Container{{Name: "app", RestartPolicy: ptr(v1.ContainerRestartPolicyNever),
			RestartPolicyRules: []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
				ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}}},
	}}
	s := v1.PodStatus{
		Phase:                 v1.PodPending,
		InitContainerStatuses: []v1.ContainerStatus{{Name: "init", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}},
		ContainerStatuses:     []v1.ContainerStatus{{Name: "app", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: ReasonRestartingAllContainers}}}},
		Conditions:            []v1.PodCondition{{Type: v1.PodInitialized, Status: v1.ConditionTrue}},
	}
	refreshReadinessConditions(pod, &s)
	if c := findCondition(s.Conditions, v1.PodInitialized); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("Initialized %+v after the probes' refresh; want it to stay True", c)
	}
}
