package lifecycle_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/podhost/podhost/lifecycle"
)

func TestContainerRestartRules(t *testing.T) {
	rule := func(op v1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) []v1.ContainerRestartRule {
		return []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart, ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}}
	}
	tests := []struct {
		name      string
		pod       v1.RestartPolicy
		container *v1.ContainerRestartPolicy
		rules     []v1.ContainerRestartRule
		exit      int32
		restarts  bool
		phase     v1.PodPhase
	}{
		{name: "rule match", pod: v1.RestartPolicyNever, container: ptr.To(v1.ContainerRestartPolicyNever), rules: rule(v1.ContainerRestartRuleOnExitCodesOpIn, 42), exit: 42, restarts: true, phase: v1.PodRunning},
		{name: "rule mismatch, container Never", pod: v1.RestartPolicyAlways, container: ptr.To(v1.ContainerRestartPolicyNever), rules: rule(v1.ContainerRestartRuleOnExitCodesOpIn, 42), exit: 1, phase: v1.PodFailed},
		{name: "NotIn matches another code", pod: v1.RestartPolicyNever, container: ptr.To(v1.ContainerRestartPolicyNever), rules: rule(v1.ContainerRestartRuleOnExitCodesOpNotIn, 0), exit: 3, restarts: true, phase: v1.PodRunning},
		{name: "container Never in an Always pod", pod: v1.RestartPolicyAlways, container: ptr.To(v1.ContainerRestartPolicyNever), exit: 1, phase: v1.PodFailed},
		{name: "container Never in an Always pod, success", pod: v1.RestartPolicyAlways, container: ptr.To(v1.ContainerRestartPolicyNever), exit: 0, phase: v1.PodSucceeded},
		{name: "container Always in a Never pod", pod: v1.RestartPolicyNever, container: ptr.To(v1.ContainerRestartPolicyAlways), exit: 1, restarts: true, phase: v1.PodRunning},
		{name: "container OnFailure, success", pod: v1.RestartPolicyAlways, container: ptr.To(v1.ContainerRestartPolicyOnFailure), exit: 0, phase: v1.PodSucceeded},
		{name: "the pod's policy", pod: v1.RestartPolicyAlways, exit: 1, restarts: true, phase: v1.PodRunning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := apiPod("1", "p")
			pod.Spec.RestartPolicy = tt.pod
			pod.Spec.Containers = []v1.Container{{Name: "c", RestartPolicy: tt.container, RestartPolicyRules: tt.rules}}
			if got := lifecycle.ContainerRestarts(pod, &pod.Spec.Containers[0], tt.exit); got != tt.restarts {
				t.Errorf("ContainerRestarts: got %v; want %v", got, tt.restarts)
			}
			rs := &lifecycle.PodStatus{ID: "1", ContainerStatuses: []lifecycle.ContainerStatus{{ID: "c1", Name: "c", State: lifecycle.ContainerExited, ExitCode: tt.exit}}}
			if got := lifecycle.GeneratePodStatus(pod, rs, v1.PodStatus{}, false, nil).Phase; got != tt.phase {
				t.Errorf("phase: got %s; want %s", got, tt.phase)
			}
		})
	}
}
