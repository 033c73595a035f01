package lifecycle

import (
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// In-place resize (the kubelet's InPlacePodVerticalScaling, with
// pod-level resources) as the status reports it. The runtime manager
// actuates a changed spec's cpu and memory in place or by a restart,
// following each container's resizePolicy; the status says what is
// actuated (ContainerStatus.Resources, PodStatus.Resources, as the
// runtime manager reports it) next to what is allocated (the spec), and
// PodResizeInProgress while the two differ.

// ResizableResources is the part of r an in-place resize changes: its cpu
// and memory requests and limits, copied; a list without either is nil.
func ResizableResources(r *v1.ResourceRequirements) v1.ResourceRequirements {
	if r == nil {
		return v1.ResourceRequirements{}
	}
	return v1.ResourceRequirements{Requests: resizable(r.Requests), Limits: resizable(r.Limits)}
}

func resizable(l v1.ResourceList) v1.ResourceList {
	var out v1.ResourceList
	for _, name := range qosResources {
		if q, ok := l[name]; ok {
			if out == nil {
				out = v1.ResourceList{}
			}
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// SameResources reports whether a and b ask for the same cpu and memory,
// requests and limits compared as quantities; a missing entry equals zero.
func SameResources(a, b v1.ResourceRequirements) bool {
	return sameList(a.Requests, b.Requests) && sameList(a.Limits, b.Limits)
}

func sameList(a, b v1.ResourceList) bool {
	for _, name := range qosResources {
		if a.Name(name, "").Cmp(*b.Name(name, "")) != 0 {
			return false
		}
	}
	return true
}

// resizeInProgress reports whether the runtime's resources of the pod lag
// behind its spec: a running container whose actuated resources differ
// from its spec's, or pod-level resources that differ from the pod
// cgroup's. Resources the runtime does not report are not judged.
func resizeInProgress(pod *v1.Pod, rs *PodStatus) bool {
	if rs == nil {
		return false
	}
	if pod.Spec.Resources != nil && rs.Resources != nil && !SameResources(*pod.Spec.Resources, *rs.Resources) {
		return true
	}
	for _, specs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range specs {
			cs := rs.Container(specs[i].Name)
			if cs != nil && cs.State == ContainerRunning && cs.Resources != nil && !SameResources(specs[i].Resources, *cs.Resources) {
				return true
			}
		}
	}
	return false
}

// setResizeStatus fills the resize fields of a generated status: each
// container's allocatedResources (its spec's requests) and, while it
// runs, its actuated resources; the pod-level ones likewise (without
// pod-level resources, the pod's allocation is its containers'); and the
// PodResizeInProgress condition while an actuation is due.
func setResizeStatus(pod *v1.Pod, rs *PodStatus, s *v1.PodStatus) {
	specs := map[string]*v1.Container{}
	for _, l := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range l {
			specs[l[i].Name] = &l[i]
		}
	}
	for _, l := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for i := range l {
			c := &l[i]
			spec := specs[c.Name]
			if spec == nil || rs == nil {
				continue
			}
			cs := rs.Container(c.Name)
			if cs == nil || cs.ID != c.ContainerID {
				continue
			}
			if len(spec.Resources.Requests) > 0 {
				c.AllocatedResources = spec.Resources.Requests.DeepCopy()
			}
			if cs.State == ContainerRunning && cs.Resources != nil {
				c.Resources = cs.Resources.DeepCopy()
			}
		}
	}
	if r := pod.Spec.Resources; r != nil {
		if len(r.Requests) > 0 {
			s.AllocatedResources = r.Requests.DeepCopy()
		}
		if rs != nil && rs.Resources != nil {
			s.Resources = rs.Resources.DeepCopy()
		}
	} else if req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}); len(req) > 0 {
		// Without pod-level resources the pod's allocation is its
		// containers' (init containers and sidecars counted as the
		// scheduler counts them), as the kubelet reports it.
		s.AllocatedResources = req
	}
	if resizeInProgress(pod, rs) {
		c := v1.PodCondition{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue}
		if rs.ResizeError != "" {
			// The kubelet's: the actuation failed, and is retried at the
			// pod's next sync.
			c.Reason, c.Message = v1.PodReasonError, rs.ResizeError
		}
		s.Conditions = append(s.Conditions, c)
	}
}

// DueForResize reports whether the pod should be synced now because its
// last status says a resize waits to be actuated and none failed: the sync loop asks it
// every tick (SyncLoop.ShouldSync), so that a resize is actuated and its
// status written within seconds rather than at the next periodic sync.
func (s *Syncer) DueForResize(pod *v1.Pod) bool {
	st, ok := s.Status.PodStatus(pod.UID)
	if !ok || isTerminalPhase(st.Phase) {
		return false
	}
	c := findCondition(st.Conditions, v1.PodResizeInProgress)
	// A resize that failed waits for the pod's periodic sync (or a new
	// resize), as the kubelet retries it, rather than every tick.
	return c != nil && c.Reason != v1.PodReasonError
}
