package node

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/eviction"
	"github.com/podhost/podhost/lifecycle"
)

// runEviction enforces the pods' local storage limits (host/eviction)
// until ctx ends.
func (n *Node) runEviction(ctx context.Context) {
	eviction.New(eviction.Config{
		RootDir: n.cfg.RootDir,
		Pods:    n.evictionCandidates,
		Stats:   n.stats.RuntimeStats, // nodestats' reading: one ListStats per period for both
		Evict:   n.evict,
		Logger:  n.log.Named("eviction"),
	}).Run(ctx)
}

// evictionCandidates are the pods of the desired set that the pod workers
// may still run, as the kubelet's active pods.
func (n *Node) evictionCandidates() []*v1.Pod {
	pods, _ := n.desired.Pods()
	return lifecycle.FilterActivePods(pods, n.core, n.isTerminal)
}

// evict records the kubelet's Evicted event and has the pod worker kill
// the pod as the kubelet's eviction manager does: an eviction kill with a
// grace period of one second whose status is Failed, reason Evicted. It
// does not wait for the kill.
func (n *Node) evict(pod *v1.Pod, e eviction.Eviction) {
	n.events.Event(pod, lifecycle.EventWarning, eviction.Reason, e.Message)
	grace := eviction.GracePeriodSeconds
	n.workers.UpdatePod(lifecycle.UpdatePodOptions{
		UpdateType: lifecycle.UpdateKill,
		Pod:        pod,
		KillPodOptions: &lifecycle.KillPodOptions{
			Evict:               true,
			GracePeriodOverride: &grace,
			PodStatusFunc:       func(st *v1.PodStatus) { eviction.FailedStatus(st, e) },
		},
	})
}
