package node

import (
	"github.com/hashicorp/go-hclog"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/kubenode"
)

// machineMemory is the node's memory capacity, which scales the OOM
// score of Burstable containers as the kubelet's does; 0 (the runtime
// manager's fallback) when it cannot be read.
func machineMemory(log hclog.Logger) int64 {
	mem, err := kubenode.MachineMemory()
	if err != nil {
		log.Warn("reading the machine's memory for OOM scores", "err", err)
		return 0
	}
	return mem
}

// nodeAllocatable is the node's allocatable resources, which a
// container's unset limit takes in the downward API: in Kubernetes mode
// those of the Node as last written, else (or before the Node is written)
// the machine measured as the Node would report it, as the kubelet takes
// its initial node then.
func (n *Node) nodeAllocatable() (v1.ResourceList, error) {
	if n.kube != nil && n.kube.agent != nil {
		if node := n.kube.agent.agent.Node(); node != nil && len(node.Status.Allocatable) > 0 {
			return node.Status.Allocatable, nil
		}
	}
	return kubenode.MachineAllocatable(n.cfg.RootDir)
}
