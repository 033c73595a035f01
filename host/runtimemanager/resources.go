package runtimemanager

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// CPU mapping constants (cgroup cpu controller).
const (
	minShares     = 2
	maxShares     = 262144
	sharesPerCPU  = 1024
	quotaPeriod   = 100000 // µs
	minQuota      = 1000   // µs
	milliPerCPU   = 1000
	guaranteedOOM = -997
	bestEffortOOM = 1000
	minBurstOOM   = 2
	maxBurstOOM   = 999
)

// resources maps the container's requests and limits to Linux resources:
// CPU shares from the CPU request (the limit when no request is set),
// quota and period from the CPU limit, the memory limit, and an OOM score
// adjustment from the pod's QoS class.
func (m *Manager) resources(pod *v1.Pod, spec *v1.Container) *runtimev1.Resources {
	cpuReq, cpuLim := milli(spec.Resources.Requests, v1.ResourceCPU), milli(spec.Resources.Limits, v1.ResourceCPU)
	if cpuReq == 0 {
		cpuReq = cpuLim
	}
	r := &runtimev1.Resources{
		CpuShares:          max(minShares, min(maxShares, cpuReq*sharesPerCPU/milliPerCPU)),
		MemoryLimitInBytes: value(spec.Resources.Limits, v1.ResourceMemory),
		OomScoreAdj:        m.oomScoreAdj(pod, spec),
	}
	if cpuLim > 0 {
		r.CpuPeriod = quotaPeriod
		r.CpuQuota = max(minQuota, cpuLim*quotaPeriod/milliPerCPU)
	}
	return r
}

func milli(l v1.ResourceList, name v1.ResourceName) int64 {
	if q, ok := l[name]; ok {
		return q.MilliValue()
	}
	return 0
}

func value(l v1.ResourceList, name v1.ResourceName) int64 {
	if q, ok := l[name]; ok {
		return q.Value()
	}
	return 0
}

// oomScoreAdj follows the QoS classes: Guaranteed pods are protected,
// BestEffort ones killed first, Burstable ones in between by their memory
// request relative to the node's memory (999 when the node memory is not
// configured).
func (m *Manager) oomScoreAdj(pod *v1.Pod, spec *v1.Container) int64 {
	switch qosClass(pod) {
	case v1.PodQOSGuaranteed:
		return guaranteedOOM
	case v1.PodQOSBestEffort:
		return bestEffortOOM
	}
	node := m.opts.NodeMemoryBytes
	if node <= 0 {
		return maxBurstOOM
	}
	req := value(spec.Resources.Requests, v1.ResourceMemory)
	adj := bestEffortOOM - bestEffortOOM*req/node
	return max(minBurstOOM, min(maxBurstOOM, adj))
}

// qosClass computes the pod's QoS class from its containers (init and
// app): BestEffort without any CPU or memory request or limit, Guaranteed
// when every container has CPU and memory limits equal to its requests
// (an unset request defaults to the limit), Burstable otherwise.
func qosClass(pod *v1.Pod) v1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	set, guaranteed := false, true
	all := append(append([]v1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range all {
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			lim, hasLim := c.Resources.Limits[name]
			req, hasReq := c.Resources.Requests[name]
			if hasLim && !lim.IsZero() || hasReq && !req.IsZero() {
				set = true
			}
			if !hasLim || lim.IsZero() || hasReq && !equal(req, lim) {
				guaranteed = false
			}
		}
	}
	switch {
	case !set:
		return v1.PodQOSBestEffort
	case guaranteed:
		return v1.PodQOSGuaranteed
	}
	return v1.PodQOSBurstable
}

func equal(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }
