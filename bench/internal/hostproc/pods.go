package hostproc

import v1 "k8s.io/api/core/v1"

// PodRunning reports whether the pod is Running with every container
// running: the moment the benchmarks time "apply → Running" to.
func PodRunning(p *v1.Pod) bool {
	if p == nil || p.Status.Phase != v1.PodRunning || len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil {
			return false
		}
	}
	return true
}
