package node

import "github.com/podhost/podhost/lifecycle"

// podSyncer is the PodSyncer the pod workers call: the lifecycle's Syncer
// inside the node's wrappers. Each wrapper handles its own pods or steps
// and hands the rest to the one inside it; the list below is the order,
// outermost first, and the only place it is written:
//
//  1. shutdownSyncer: once the node shuts down no pod starts, and a pod
//     the shutdown stopped is finished with the phase it kept. It is
//     outermost so that no wrapper inside starts or finishes such a pod.
//  2. removingSyncer: once a deleted pod's SyncTerminatedPod succeeded
//     (inside), its containers, sandboxes and logs are removed in the
//     background.
//  3. finishedSyncer: a pod that had finished before the host's restart
//     starts nothing and reports its stored status, not the runtime's.
//  4. mirrorSyncer, in Kubernetes mode: SyncPod gets the static pod's
//     mirror from the API server.
func (n *Node) podSyncer(syncer *lifecycle.Syncer) lifecycle.PodSyncer {
	var inner lifecycle.PodSyncer = syncer
	if n.kube != nil {
		inner = mirrorSyncer{PodSyncer: inner, desired: n.desired}
	}
	inner = &finishedSyncer{PodSyncer: inner, finished: n.finished, status: n.status, runtime: n.runtime}
	inner = &removingSyncer{PodSyncer: inner, node: n}
	return &shutdownSyncer{PodSyncer: inner, node: n}
}
