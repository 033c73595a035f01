package localapi

import (
	v1 "k8s.io/api/core/v1"
)

// PhaseRejected is the phase shown for a pod that will not run because of
// a validation or conflict error and has no status of its own.
const PhaseRejected = "Rejected"

// Summarize reduces a pod to its list line.
func Summarize(it PodItem) PodSummary {
	p := it.Pod
	s := PodSummary{
		Namespace:  p.Namespace,
		Name:       p.Name,
		UID:        string(p.UID),
		Source:     it.Source,
		Phase:      string(p.Status.Phase),
		Containers: len(p.Spec.Containers),
		Created:    p.CreationTimestamp.Time,
		Error:      it.Error,
	}
	if s.Created.IsZero() && p.Status.StartTime != nil {
		// A manifest pod has no creation time; its age runs from when
		// the host first started it.
		s.Created = p.Status.StartTime.Time
	}
	switch {
	case s.Phase == "" && it.Error != "":
		s.Phase = PhaseRejected
	case s.Phase == "":
		s.Phase = string(v1.PodPending)
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.Ready {
			s.ReadyContainers++
		}
		s.Restarts += c.RestartCount
	}
	for _, c := range p.Status.InitContainerStatuses {
		s.Restarts += c.RestartCount
	}
	if p.DeletionTimestamp != nil {
		t := p.DeletionTimestamp.Time
		s.DeletionTimestamp = &t
	}
	s.Reason = reason(p)
	return s
}

// reason is the most telling word about a pod that is not simply running:
// the pod's own reason, a waiting or failed init container, a waiting or
// terminated container, or Terminating.
func reason(p *v1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "Terminating"
	}
	if p.Status.Reason != "" {
		return p.Status.Reason
	}
	for _, c := range p.Status.InitContainerStatuses {
		switch st := c.State; {
		case st.Terminated != nil && st.Terminated.ExitCode == 0:
			continue
		case st.Terminated != nil && st.Terminated.Reason != "":
			return "Init:" + st.Terminated.Reason
		case st.Terminated != nil:
			return "Init:Error"
		case st.Waiting != nil && st.Waiting.Reason != "" && st.Waiting.Reason != "PodInitializing":
			return "Init:" + st.Waiting.Reason
		default:
			return "PodInitializing"
		}
	}
	var why string
	for _, c := range p.Status.ContainerStatuses {
		switch st := c.State; {
		case st.Waiting != nil && st.Waiting.Reason != "":
			return st.Waiting.Reason
		case st.Terminated != nil && st.Terminated.Reason != "" && why == "":
			why = st.Terminated.Reason
		}
	}
	return why
}
