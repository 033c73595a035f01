package lifecycle

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxTerminationMessageBytes is the per-pod budget for termination
// messages, shared by all containers.
const maxTerminationMessageBytes = 12 * 1024

// Reasons and messages for containers whose status was lost.
const (
	ReasonContainerStatusUnknown = "ContainerStatusUnknown"
	lostExitCode                 = 137
	msgLostAtTermination         = "The container could not be located when the pod was terminated"
	msgLostWhileRunning          = "The container could not be located when the pod was deleted.  The container used to be Running"
)

// normalizeStatus makes equal statuses compare equal: times truncated to
// seconds, container lists sorted by name, termination messages cut to the
// per-pod budget.
func normalizeStatus(pod *v1.Pod, s *v1.PodStatus) {
	n := len(s.ContainerStatuses) + len(s.InitContainerStatuses) + len(s.EphemeralContainerStatuses)
	budget := maxTerminationMessageBytes
	if n > 0 {
		budget /= n
	}
	if s.StartTime != nil {
		t := truncTime(*s.StartTime)
		s.StartTime = &t
	}
	for i := range s.Conditions {
		s.Conditions[i].LastProbeTime = truncTime(s.Conditions[i].LastProbeTime)
		s.Conditions[i].LastTransitionTime = truncTime(s.Conditions[i].LastTransitionTime)
	}
	for _, list := range [][]v1.ContainerStatus{s.ContainerStatuses, s.InitContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			normalizeContainerState(&list[i].State, budget)
			normalizeContainerState(&list[i].LastTerminationState, budget)
		}
	}
	sortConditions(s.Conditions)
	sortByName(s.ContainerStatuses)
	sortByName(s.EphemeralContainerStatuses)
	if pod != nil {
		sortInitByOrder(pod, s.InitContainerStatuses)
	} else {
		sortByName(s.InitContainerStatuses)
	}
}

func truncTime(t metav1.Time) metav1.Time {
	if t.IsZero() {
		return t
	}
	return metav1.NewTime(t.Truncate(time.Second))
}

func normalizeContainerState(c *v1.ContainerState, budget int) {
	if c.Running != nil {
		c.Running.StartedAt = truncTime(c.Running.StartedAt)
	}
	if t := c.Terminated; t != nil {
		t.StartedAt = truncTime(t.StartedAt)
		t.FinishedAt = truncTime(t.FinishedAt)
		if len(t.Message) > budget {
			t.Message = t.Message[:budget]
		}
	}
}

func sortConditions(cs []v1.PodCondition) {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Type < cs[j].Type })
}

func sortByName(l []v1.ContainerStatus) {
	sort.SliceStable(l, func(i, j int) bool { return l[i].Name < l[j].Name })
}

// sortInitByOrder keeps init containers in spec order, which is their
// execution order.
func sortInitByOrder(pod *v1.Pod, l []v1.ContainerStatus) {
	idx := make(map[string]int, len(pod.Spec.InitContainers))
	for i, c := range pod.Spec.InitContainers {
		idx[c.Name] = i
	}
	sort.SliceStable(l, func(i, j int) bool { return idx[l[i].Name] < idx[l[j].Name] })
}

// illegalRegression reports a container that was terminated in old and is
// not terminated in new although the restart policy forbids a restart.
func illegalRegression(pod *v1.Pod, old, new *v1.PodStatus) (string, bool) {
	if pod == nil || CouldRestartAll(pod) {
		// Every container may run again after RestartAllContainers, as
		// the API server allows.
		return "", false
	}
	check := func(olds, news []v1.ContainerStatus, restarts func(name string, exitCode int32) bool) (string, bool) {
		for _, o := range olds {
			if o.State.Terminated == nil || restarts(o.Name, o.State.Terminated.ExitCode) {
				continue
			}
			for _, n := range news {
				if n.Name == o.Name && n.State.Terminated == nil {
					return o.Name, true
				}
			}
		}
		return "", false
	}
	app := func(name string, exitCode int32) bool { return ContainerRestarts(pod, appSpec(pod, name), exitCode) }
	if name, bad := check(old.ContainerStatuses, new.ContainerStatuses, app); bad {
		return name, true
	}
	init := func(name string, exitCode int32) bool {
		if spec := initSpec(pod, name); spec != nil {
			return initRestarts(pod, spec, exitCode)
		}
		return podRestarts(pod.Spec.RestartPolicy, exitCode)
	}
	return check(old.InitContainerStatuses, new.InitContainerStatuses, init)
}

// carryTransitionTimes keeps the LastTransitionTime of conditions whose
// status did not change, and stamps now on the others.
func carryTransitionTimes(old, new *v1.PodStatus, now time.Time) {
	for i := range new.Conditions {
		c := &new.Conditions[i]
		if o := findCondition(old.Conditions, c.Type); o != nil && o.Status == c.Status {
			c.LastTransitionTime = o.LastTransitionTime
			continue
		}
		if c.LastTransitionTime.IsZero() || findCondition(old.Conditions, c.Type) != nil {
			c.LastTransitionTime = metav1.NewTime(now)
		}
	}
}

func findCondition(cs []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

func setCondition(s *v1.PodStatus, c v1.PodCondition) {
	if o := findCondition(s.Conditions, c.Type); o != nil {
		*o = c
		return
	}
	s.Conditions = append(s.Conditions, c)
}

// isRunningState reports a running container.
func isRunningState(c *v1.ContainerStatus) bool { return c.State.Running != nil }

// hasStarted reports a container that ran at least once.
func hasStarted(c *v1.ContainerStatus) bool {
	return c.State.Running != nil || c.State.Terminated != nil || c.LastTerminationState.Terminated != nil
}
