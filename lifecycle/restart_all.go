package lifecycle

import (
	v1 "k8s.io/api/core/v1"
)

// The kubelet's reasons of RestartAllContainers (KEP-5532): the
// AllContainersRestarting condition's while a run is being ended, and the
// waiting reason of a container whose run ended.
const (
	ReasonRestartAllContainersStarted = "RestartAllContainersStarted"
	ReasonRestartingAllContainers     = "RestartingAllContainers"
)

const (
	msgRestartAllStarted = "a container exited with a RestartAllContainers rule: every container of the pod runs again"
	msgRestartingAll     = "restarting with the rest of the pod (RestartAllContainers): waits for its turn after the init containers"
)

// restartAllPending reports whether a container of the pod's current run
// exited with a RestartAllContainers rule (RestartsAll) and the run has not
// been ended yet: the runtime did not mark it ResetByRestartAll.
func restartAllPending(pod *v1.Pod, rs *PodStatus) bool {
	if rs == nil {
		return false
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			cs := rs.Container(list[i].Name)
			if cs != nil && !cs.ResetByRestartAll && cs.State == ContainerExited && RestartsAll(&list[i], cs.ExitCode) {
				return true
			}
		}
	}
	return false
}

// allContainersRestartingCondition is the AllContainersRestarting
// condition, reported only by a pod that CouldRestartAll: True while a
// run is being ended, False otherwise, with the terminal phase's reason.
func allContainersRestartingCondition(phase v1.PodPhase, pending bool) v1.PodCondition {
	c := v1.PodCondition{Type: v1.AllContainersRestarting, Status: v1.ConditionFalse}
	switch {
	case phase == v1.PodSucceeded:
		c.Reason = ReasonPodCompleted
	case phase == v1.PodFailed:
		c.Reason = ReasonPodFailed
	case pending:
		c.Status, c.Reason, c.Message = v1.ConditionTrue, ReasonRestartAllContainersStarted, msgRestartAllStarted
	}
	return c
}

// resetContainerStatus is the status of a container whose run a
// RestartAllContainers rule ended, as the kubelet reports it until the
// container's next instance exists: waiting, its end as its last
// termination, and counted as restarted.
func resetContainerStatus(c *v1.ContainerStatus, cs *ContainerStatus) {
	c.ContainerID, c.ImageID = "", cs.ImageID
	if t := runtimeState(cs).Terminated; t != nil {
		c.LastTerminationState = v1.ContainerState{Terminated: t}
	}
	c.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: ReasonRestartingAllContainers, Message: msgRestartingAll}}
	c.RestartCount = max(c.RestartCount, cs.RestartCount+1)
}

// keepInitialized keeps the Initialized condition True once old had it:
// the init containers of a pod restarted by RestartAllContainers run
// again, but the pod stays initialized, as under the kubelet.
func keepInitialized(old, s *v1.PodStatus) {
	if o := findCondition(old.Conditions, v1.PodInitialized); o == nil || o.Status != v1.ConditionTrue {
		return
	}
	if c := findCondition(s.Conditions, v1.PodInitialized); c != nil && c.Status != v1.ConditionTrue {
		*c = v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue}
	}
}
