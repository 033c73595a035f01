package lifecycle

import (
	"slices"

	v1 "k8s.io/api/core/v1"
)

// ContainerRestarts reports whether a regular (app) container of pod that
// exited with exitCode is restarted, as the kubelet decides it with
// container restart rules: the first of its restartPolicyRules whose exit
// codes match decides (action Restart restarts it, and so does
// RestartAllContainers, with every other container: RestartsAll); else
// its own restartPolicy; else the pod's. A sidecar always restarts.
func ContainerRestarts(pod *v1.Pod, c *v1.Container, exitCode int32) bool {
	if c == nil {
		return podRestarts(pod.Spec.RestartPolicy, exitCode)
	}
	if r := matchingRule(c, exitCode); r != nil {
		return r.Action == v1.ContainerRestartRuleActionRestart || r.Action == v1.ContainerRestartRuleActionRestartAllContainers
	}
	if c.RestartPolicy != nil {
		return podRestarts(v1.RestartPolicy(*c.RestartPolicy), exitCode)
	}
	return podRestarts(pod.Spec.RestartPolicy, exitCode)
}

// InitContainerRestarts reports whether an ordinary init container of
// pod that failed with exitCode (not 0) runs again rather than failing
// the pod: the first of its restartPolicyRules whose exit codes match
// decides (Restart, or RestartAllContainers with the whole pod); else its
// own restartPolicy (Never or OnFailure); else the pod's, under which
// only Never fails the pod. A sidecar always restarts.
func InitContainerRestarts(pod *v1.Pod, c *v1.Container, exitCode int32) bool {
	if c == nil || IsRestartableInitContainer(c) {
		return true
	}
	if r := matchingRule(c, exitCode); r != nil {
		return r.Action == v1.ContainerRestartRuleActionRestart || r.Action == v1.ContainerRestartRuleActionRestartAllContainers
	}
	if c.RestartPolicy != nil {
		return podRestarts(v1.RestartPolicy(*c.RestartPolicy), exitCode)
	}
	return pod.Spec.RestartPolicy != v1.RestartPolicyNever
}

// RestartsAll reports whether the container c (init, sidecar or app)
// exiting with exitCode restarts every container of its pod: the first of
// its restartPolicyRules whose exit codes match has the action
// RestartAllContainers (the kubelet's RestartAllContainersOnContainerExits).
func RestartsAll(c *v1.Container, exitCode int32) bool {
	if c == nil {
		return false
	}
	r := matchingRule(c, exitCode)
	return r != nil && r.Action == v1.ContainerRestartRuleActionRestartAllContainers
}

// CouldRestartAll reports whether some init or app container of pod has a
// rule with the action RestartAllContainers: then every container may run
// again after it exited, whatever its own policy, and the pod reports the
// AllContainersRestarting condition.
func CouldRestartAll(pod *v1.Pod) bool {
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			for _, r := range list[i].RestartPolicyRules {
				if r.Action == v1.ContainerRestartRuleActionRestartAllContainers {
					return true
				}
			}
		}
	}
	return false
}

// NeverRestarts reports whether the container is never restarted,
// whatever its exit code. In a pod that CouldRestartAll every container
// may run again.
func NeverRestarts(pod *v1.Pod, c *v1.Container) bool {
	if IsRestartableInitContainer(c) || CouldRestartAll(pod) {
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

// matchingRule is the first of c's restartPolicyRules whose exit codes
// match exitCode, or nil.
func matchingRule(c *v1.Container, exitCode int32) *v1.ContainerRestartRule {
	for i := range c.RestartPolicyRules {
		r := &c.RestartPolicyRules[i]
		if r.ExitCodes != nil && exitCodesMatch(r.ExitCodes, exitCode) {
			return r
		}
	}
	return nil
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
