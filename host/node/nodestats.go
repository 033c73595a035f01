package node

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/podhost/podhost/host/nodestats"
)

// newNodeStats gathers the node's numbers for the daemon endpoint's
// /stats/summary and /metrics/resource, and the local API's
// /v1/stats/summary (podhost top).
func (n *Node) newNodeStats() *nodestats.Provider {
	return nodestats.New(nodestats.Config{
		NodeName: n.cfg.NodeName, RootDir: n.cfg.RootDir,
		Runtime: n.runtime.ListStats, Volumes: n.volumeUsage,
		Logger: n.log.Named("nodestats"),
	})
}

// volumeUsage is the usage the volume stats gatherer keeps of each pod's
// claims, by pod UID and volume name.
func (n *Node) volumeUsage() map[string][]nodestats.Volume {
	if n.volumeStats == nil {
		return nil
	}
	claims := map[types.NamespacedName]nodestats.FsNumbers{}
	for _, c := range n.volumeStats.Claims() {
		u := c.Usage
		claims[c.Claim] = nodestats.FsNumbers{Capacity: uint64(u.CapacityBytes), Available: uint64(u.AvailableBytes), Used: uint64(u.UsedBytes),
			Inodes: uint64(u.Inodes), InodesFree: uint64(u.InodesFree)}
	}
	out := map[string][]nodestats.Volume{}
	for _, r := range n.podRefs() {
		for _, v := range r.pod.Spec.Volumes {
			if v.PersistentVolumeClaim == nil {
				continue
			}
			claim := types.NamespacedName{Namespace: r.pod.Namespace, Name: v.PersistentVolumeClaim.ClaimName}
			if u, ok := claims[claim]; ok {
				out[string(r.pod.UID)] = append(out[string(r.pod.UID)], nodestats.Volume{Name: v.Name, ClaimNamespace: claim.Namespace, ClaimName: claim.Name, Usage: u})
			}
		}
	}
	return out
}

// metricsGatherer is the node's registry when it can be read (a
// prometheus.Registry), for the daemon endpoint's /metrics.
func (n *Node) metricsGatherer() prometheus.Gatherer {
	g, _ := n.cfg.Registry.(prometheus.Gatherer)
	return g
}

// kubePods lists the pods the node runs with their status, for /pods.
func (n *Node) kubePods(context.Context) ([]v1.Pod, error) {
	items := n.podItems()
	pods := make([]v1.Pod, 0, len(items))
	for _, it := range items {
		if it.Error == "" {
			pods = append(pods, *it.Pod)
		}
	}
	return pods, nil
}

// StatsSummary is the node's last reading of its numbers, the kubelet's
// Summary API, for the local API (podhost top); a request never asks the
// runtime.
func (n *Node) StatsSummary() (statsapi.Summary, error) { return n.stats.Summary() }
