package lifecycle

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// The kubelet's reasons of the pod conditions it owns.
const (
	ReasonUnknownContainerStatuses = "UnknownContainerStatuses"
	ReasonPodCompleted             = "PodCompleted"
	ReasonPodFailed                = "PodFailed"
	ReasonContainersNotReady       = "ContainersNotReady"
	ReasonContainersNotInitialized = "ContainersNotInitialized"
	ReasonReadinessGatesNotReady   = "ReadinessGatesNotReady"
)

// IsRestartableInitContainer reports whether c is a sidecar: an init
// container with restartPolicy Always, which keeps running next to the app
// containers.
func IsRestartableInitContainer(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// podConditions returns the conditions the agent owns, in the kubelet's
// order: PodReadyToStartContainers (the sandbox is up), Initialized,
// Ready, ContainersReady and PodScheduled.
func podConditions(pod *v1.Pod, s *v1.PodStatus, sandboxReady bool) []v1.PodCondition {
	toStart := v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionFalse}
	if sandboxReady {
		toStart.Status = v1.ConditionTrue
	}
	containersReady := containersReadyCondition(pod, s)
	return []v1.PodCondition{
		toStart,
		initializedCondition(pod, s),
		podReadyCondition(pod, containersReady),
		containersReady,
		{Type: v1.PodScheduled, Status: v1.ConditionTrue},
	}
}

// refreshReadinessConditions derives Initialized, ContainersReady and
// Ready of s again from its container statuses, after the probes changed
// their started and ready.
func refreshReadinessConditions(pod *v1.Pod, s *v1.PodStatus) {
	containersReady := containersReadyCondition(pod, s)
	before := v1.PodStatus{Conditions: slices.Clone(s.Conditions)}
	setCondition(s, initializedCondition(pod, s))
	if CouldRestartAll(pod) {
		keepInitialized(&before, s)
	}
	setCondition(s, containersReady)
	setCondition(s, podReadyCondition(pod, containersReady))
}

// statusOf returns the status of the named container among the init and
// app container statuses of s.
func statusOf(s *v1.PodStatus, name string) (*v1.ContainerStatus, bool) {
	for _, l := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for i := range l {
			if l[i].Name == name {
				return &l[i], true
			}
		}
	}
	return nil, false
}

// notReadyMessage joins the kubelet's "containers with … status: [a b]"
// phrases of the non-empty lists.
func notReadyMessage(unknown []string, adjective string, names []string) string {
	var parts []string
	if len(unknown) > 0 {
		parts = append(parts, fmt.Sprintf("containers with unknown status: %s", unknown))
	}
	if len(names) > 0 {
		parts = append(parts, fmt.Sprintf("containers with %s status: %s", adjective, names))
	}
	return strings.Join(parts, ", ")
}

// terminalReadyReason is the reason of Ready and ContainersReady of a pod
// in a terminal phase.
func terminalReadyReason(phase v1.PodPhase) string {
	switch phase {
	case v1.PodFailed:
		return ReasonPodFailed
	case v1.PodSucceeded:
		return ReasonPodCompleted
	}
	return ""
}

// containersReadyCondition is True when every app container and every
// sidecar is ready. A Succeeded pod (every status known) gives False with
// PodCompleted, a Failed one False with PodFailed.
func containersReadyCondition(pod *v1.Pod, s *v1.PodStatus) v1.PodCondition {
	c := v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionFalse}
	if len(s.InitContainerStatuses) == 0 && len(s.ContainerStatuses) == 0 {
		c.Reason = ReasonUnknownContainerStatuses
		return c
	}
	var unknown, unready []string
	check := func(spec *v1.Container) {
		switch st, ok := statusOf(s, spec.Name); {
		case !ok:
			unknown = append(unknown, spec.Name)
		case !st.Ready:
			unready = append(unready, spec.Name)
		}
	}
	for i := range pod.Spec.InitContainers {
		if IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			check(&pod.Spec.InitContainers[i])
		}
	}
	for i := range pod.Spec.Containers {
		check(&pod.Spec.Containers[i])
	}
	if (s.Phase == v1.PodSucceeded && len(unknown) == 0) || s.Phase == v1.PodFailed {
		c.Reason = terminalReadyReason(s.Phase)
		return c
	}
	if msg := notReadyMessage(unknown, "unready", unready); msg != "" {
		c.Reason, c.Message = ReasonContainersNotReady, msg
		return c
	}
	c.Status = v1.ConditionTrue
	return c
}

// podReadyCondition is ContainersReady, and then False with
// ReadinessGatesNotReady while a readiness gate's condition (set in the
// API by someone else) is missing or not True.
func podReadyCondition(pod *v1.Pod, containersReady v1.PodCondition) v1.PodCondition {
	c := containersReady
	c.Type = v1.PodReady
	if c.Status != v1.ConditionTrue {
		return c
	}
	var msgs []string
	for _, g := range pod.Spec.ReadinessGates {
		switch gc := findCondition(pod.Status.Conditions, g.ConditionType); {
		case gc == nil:
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", string(g.ConditionType)))
		case gc.Status != v1.ConditionTrue:
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", string(g.ConditionType), gc.Status))
		}
	}
	if len(msgs) > 0 {
		return v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: ReasonReadinessGatesNotReady, Message: strings.Join(msgs, ", ")}
	}
	return c
}

// initializedCondition is True once every init container exited 0 and
// every sidecar started, once an app container ran (sidecars restarting
// later do not undo it), or when the pod has no init container.
func initializedCondition(pod *v1.Pod, s *v1.PodStatus) v1.PodCondition {
	c := v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue}
	if len(pod.Spec.InitContainers) == 0 {
		return c
	}
	var unknown, incomplete []string
	for i := range pod.Spec.InitContainers {
		spec := &pod.Spec.InitContainers[i]
		st, ok := statusOf(s, spec.Name)
		if !ok {
			unknown = append(unknown, spec.Name)
			continue
		}
		if !initContainerInitialized(spec, st) {
			incomplete = append(incomplete, spec.Name)
		}
	}
	if s.Phase == v1.PodSucceeded && len(unknown) == 0 {
		c.Reason = ReasonPodCompleted
		return c
	}
	if anyAppContainerRan(s) {
		return c
	}
	if msg := notReadyMessage(unknown, "incomplete", incomplete); msg != "" {
		c.Status, c.Reason, c.Message = v1.ConditionFalse, ReasonContainersNotInitialized, msg
	}
	return c
}

// initContainerInitialized: a sidecar once it started, an ordinary init
// container once it exited 0 (which makes it ready).
func initContainerInitialized(spec *v1.Container, st *v1.ContainerStatus) bool {
	if IsRestartableInitContainer(spec) {
		return st.Started != nil && *st.Started
	}
	return st.Ready
}

// anyAppContainerRan reports whether an app container runs or ran.
func anyAppContainerRan(s *v1.PodStatus) bool {
	for _, c := range s.ContainerStatuses {
		if c.State.Running != nil || c.State.Terminated != nil {
			return true
		}
	}
	return false
}
