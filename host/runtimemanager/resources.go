package runtimemanager

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
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

// resources maps the container's requests and limits to Linux resources
// (resourcesFor with what the spec asks).
func (m *Manager) resources(pod *v1.Pod, spec *v1.Container) *runtimev1.Resources {
	return m.resourcesFor(pod, spec, desiredResources(pod, spec))
}

// resourcesFor maps a container's resources r to Linux resources: CPU
// shares from the CPU request (the limit when no request is set), quota
// and period from the CPU limit, the memory limit, the pod-level limits
// where the container sets none (as the kubelet does), and an OOM score
// adjustment from the pod's QoS class.
func (m *Manager) resourcesFor(pod *v1.Pod, spec *v1.Container, r actuatedResources) *runtimev1.Resources {
	eff := r.effective()
	cpuReq, cpuLim := milli(eff.Requests, v1.ResourceCPU), milli(eff.Limits, v1.ResourceCPU)
	if cpuReq == 0 {
		cpuReq = milli(r.Own.Limits, v1.ResourceCPU)
	}
	out := &runtimev1.Resources{
		CpuShares:          cpuShares(cpuReq),
		MemoryLimitInBytes: value(eff.Limits, v1.ResourceMemory),
		OomScoreAdj:        m.oomScoreAdj(pod, spec),
	}
	if cpuLim > 0 {
		out.CpuPeriod, out.CpuQuota = quotaPeriod, cpuQuota(cpuLim)
	}
	return out
}

// cpuShares are the cgroup CPU shares of a CPU request in millicores.
func cpuShares(milliCPU int64) int64 {
	return max(minShares, min(maxShares, milliCPU*sharesPerCPU/milliPerCPU))
}

// cpuQuota is the CFS quota of a CPU limit in millicores, per quotaPeriod.
func cpuQuota(milliCPU int64) int64 { return max(minQuota, milliCPU*quotaPeriod/milliPerCPU) }

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
// configured); a pod-level memory request that its containers do not
// request is shared out equally among them, as the kubelet does.
func (m *Manager) oomScoreAdj(pod *v1.Pod, spec *v1.Container) int64 {
	switch lifecycle.PodQOS(pod) {
	case v1.PodQOSGuaranteed:
		return guaranteedOOM
	case v1.PodQOSBestEffort:
		return bestEffortOOM
	}
	node := m.opts.NodeMemoryBytes
	if node <= 0 {
		return maxBurstOOM
	}
	req := value(spec.Resources.Requests, v1.ResourceMemory) + unrequestedPodMemory(pod)
	adj := bestEffortOOM - bestEffortOOM*req/node
	return max(minBurstOOM, min(maxBurstOOM, adj))
}

// unrequestedPodMemory is the pod-level memory request its app and
// sidecar containers do not request themselves, divided among them.
func unrequestedPodMemory(pod *v1.Pod) int64 {
	if pod.Spec.Resources == nil {
		return 0
	}
	podReq := value(pod.Spec.Resources.Requests, v1.ResourceMemory)
	var sum, n int64
	for i := range pod.Spec.Containers {
		sum += value(pod.Spec.Containers[i].Resources.Requests, v1.ResourceMemory)
		n++
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; lifecycle.IsRestartableInitContainer(c) {
			sum += value(c.Resources.Requests, v1.ResourceMemory)
			n++
		}
	}
	if n == 0 || podReq <= sum {
		return 0
	}
	return (podReq - sum) / n
}
