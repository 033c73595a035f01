package lifecycle

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// PodQOS is the pod's quality of service class, which the API server sets
// at creation and the node reports in status.qosClass: BestEffort when no
// container (init containers included) requests or limits cpu or memory,
// Guaranteed when every container limits both and requests what it limits
// (or the pod-level resources do), Burstable otherwise. A status without
// it would differ from the API server's copy on every write.
func PodQOS(pod *v1.Pod) v1.PodQOSClass {
	if r := pod.Spec.Resources; r != nil && (len(r.Requests) > 0 || len(r.Limits) > 0) {
		return qosOf([]v1.ResourceRequirements{*r})
	}
	var all []v1.ResourceRequirements
	for _, c := range pod.Spec.InitContainers {
		all = append(all, c.Resources)
	}
	for _, c := range pod.Spec.Containers {
		all = append(all, c.Resources)
	}
	return qosOf(all)
}

var qosResources = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory}

func qosOf(all []v1.ResourceRequirements) v1.PodQOSClass {
	positive := func(l v1.ResourceList, name v1.ResourceName) (resource.Quantity, bool) {
		q, ok := l[name]
		return q, ok && q.Sign() > 0
	}
	some, guaranteed := false, len(all) > 0
	for _, r := range all {
		for _, name := range qosResources {
			req, hasReq := positive(r.Requests, name)
			lim, hasLim := positive(r.Limits, name)
			some = some || hasReq || hasLim
			if !hasLim || (hasReq && req.Cmp(lim) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !some:
		return v1.PodQOSBestEffort
	case guaranteed:
		return v1.PodQOSGuaranteed
	}
	return v1.PodQOSBurstable
}
