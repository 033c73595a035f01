package lifecycle

import (
	"slices"

	v1 "k8s.io/api/core/v1"
)

// ContainerRestarts reports whether a regular (app) container of pod that
// exited with exitCode is restarted, as the kubelet decides it with
// container restart rules: the first of its restartPolicyRules whose exit
// codes match decides (action Restart restarts it); else its own
// restartPolicy; else the pod's. A sidecar always restarts.
func ContainerRestarts(pod *v1.Pod, c *v1.Container, exitCode int32) bool {
	if c == nil {
		return podRestarts(pod.Spec.RestartPolicy, exitCode)
	}
	for _, r := range c.RestartPolicyRules {
		if r.ExitCodes != nil && exitCodesMatch(r.ExitCodes, exitCode) {
			return r.Action == v1.ContainerRestartRuleActionRestart
		}
	}
	if c.RestartPolicy != nil {
		return podRestarts(v1.RestartPolicy(*c.RestartPolicy), exitCode)
	}
	return podRestarts(pod.Spec.RestartPolicy, exitCode)
}

// NeverRestarts reports whether the container is never restarted,
// whatever its exit code.
func NeverRestarts(pod *v1.Pod, c *v1.Container) bool {
	if IsRestartableInitContainer(c) {
		return false
	}
	for _, r := range c.RestartPolicyRules {
		if r.Action == v1.ContainerRestartRuleActionRestart {
			return false
		}
	}
	policy := pod.Spec.RestartPolicy
	if c.RestartPolicy != nil {
		policy = v1.RestartPolicy(*c.RestartPolicy)
	}
	return policy == v1.RestartPolicyNever
}

func exitCodesMatch(e *v1.ContainerRestartRuleOnExitCodes, code int32) bool {
	in := slices.Contains(e.Values, code)
	if e.Operator == v1.ContainerRestartRuleOnExitCodesOpNotIn {
		return !in
	}
	return in
}

func podRestarts(policy v1.RestartPolicy, exitCode int32) bool {
	switch policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true
}

// appSpec returns the app container named name, or nil.
func appSpec(pod *v1.Pod, name string) *v1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}
