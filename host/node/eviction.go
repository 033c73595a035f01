package node

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/eviction"
	"github.com/podhost/podhost/host/nodestats"
	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// newEviction builds the eviction manager (host/eviction): the pods' local
// storage limits and node pressure, with the thresholds of the config.
func (n *Node) newEviction() (*eviction.Manager, error) {
	thresholds, err := evictionThresholds(n.cfg.EvictionHard)
	if err != nil {
		return nil, err
	}
	return eviction.New(eviction.Config{
		RootDir:          n.cfg.RootDir,
		Pods:             n.evictionCandidates,
		Stats:            n.stats.RuntimeStats, // nodestats' reading: one ListStats per period for both
		Evict:            n.evict,
		Logger:           n.log.Named("eviction"),
		Signals:          pressureSignals(n.stats.LastReading),
		Thresholds:       thresholds,
		TransitionPeriod: n.cfg.EvictionPressureTransitionPeriod,
		NodeEvent:        n.nodeEvent,
		Cleaned:          func(uid types.UID) bool { return n.core.ShouldPodBeFinished(uid) }, // n.core is made after
	}), nil
}

// evictionThresholds are the default thresholds with those of hard put in
// their place; a signal turned off ("0%") is left out.
func evictionThresholds(hard map[string]string) ([]eviction.Threshold, error) {
	out := []eviction.Threshold{}
	for _, t := range eviction.DefaultThresholds() {
		if _, set := hard[t.Signal]; !set {
			out = append(out, t)
		}
	}
	keys := make([]string, 0, len(hard))
	for k := range hard {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, sig := range keys {
		t, on, err := eviction.ParseThreshold(sig, hard[sig])
		if err != nil {
			return nil, fmt.Errorf("evictionHard: %w", err)
		}
		if on {
			out = append(out, t)
		}
	}
	return out, nil
}

// pressureSignals are the node's signals from host/nodestats' last
// reading: memory.available is MemTotal less the working set (as the
// stats summary counts it), nodefs the filesystem of the root directory,
// imagefs the runtime's image filesystem when the runtime names one; each
// observation is dated by the reading.
func pressureSignals(reading func() (nodestats.Sample, error)) func(*runtimev1.ListStatsResponse) (eviction.Observations, error) {
	return func(*runtimev1.ListStatsResponse) (eviction.Observations, error) {
		s, err := reading()
		if err != nil {
			return nil, err
		}
		obs := eviction.Observations{}
		if n := s.Node; n.MemTotal > 0 {
			obs[eviction.SignalMemoryAvailable] = eviction.Observation{Available: n.MemTotal - min(n.WorkingSet(), n.MemTotal), Capacity: n.MemTotal, At: s.Time}
		}
		fs := func(st nodestats.FsNumbers, avail, inodes string) {
			if st.Capacity > 0 {
				obs[avail] = eviction.Observation{Available: st.Available, Capacity: st.Capacity, At: s.Time}
			}
			if st.Inodes > 0 {
				obs[inodes] = eviction.Observation{Available: st.InodesFree, Capacity: st.Inodes, At: s.Time}
			}
		}
		fs(s.Node.RootFs, eviction.SignalNodeFsAvailable, eviction.SignalNodeFsInodesFree)
		fs(s.ImageFs, eviction.SignalImageFsAvailable, eviction.SignalImageFsInodesFree)
		return obs, nil
	}
}

// nodeEvent records an event on the node: in the event ring and, in
// Kubernetes mode, on the API server's Node.
func (n *Node) nodeEvent(eventType, reason, message string) {
	n.events.Event(nil, eventType, reason, message)
	if n.kube != nil && n.kube.agent != nil {
		n.kube.agent.agent.NodeEvent(eventType, reason, message)
	}
}

// evictionCandidates are the pods of the desired set that the pod workers
// may still run, as the kubelet's active pods.
func (n *Node) evictionCandidates() []*v1.Pod {
	pods, _ := n.desired.Pods()
	return lifecycle.FilterActivePods(pods, n.core, n.isTerminal)
}

// evict records the kubelet's Evicted event and has the pod worker kill
// the pod as the kubelet's eviction manager does: an eviction kill with a
// grace period of one second whose status is Failed, reason Evicted (with
// the DisruptionTarget condition for node pressure). It does not wait for
// the kill.
func (n *Node) evict(pod *v1.Pod, e eviction.Eviction) {
	n.events.Event(pod, lifecycle.EventWarning, eviction.Reason, e.Message)
	grace := eviction.GracePeriodSeconds
	n.workers.UpdatePod(lifecycle.UpdatePodOptions{
		UpdateType: lifecycle.UpdateKill,
		Pod:        pod,
		KillPodOptions: &lifecycle.KillPodOptions{
			Evict:               true,
			GracePeriodOverride: &grace,
			PodStatusFunc:       func(st *v1.PodStatus) { eviction.SetStatus(st, e, time.Now()) },
		},
	})
}
