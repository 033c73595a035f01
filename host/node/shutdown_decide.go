package node

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/state"
	"github.com/podhost/podhost/lifecycle"
)

// The decisions of a node shutdown, as plain functions of their inputs;
// shutdown.go performs them.

// ReasonNodeShutdown is the status reason of a pod stopped by a node
// shutdown, and the reason of the node's shutdown events.
const ReasonNodeShutdown = "NodeShutdown"

// nodeShutdownMessage is the status message of a pod stopped by a node
// shutdown.
const nodeShutdownMessage = "Pod was stopped because the node shut down; the host starts it again when it starts."

// shutdownTarget is a pod a node shutdown stops, with the phase it keeps;
// a pod already being deleted (deleting) keeps none.
type shutdownTarget struct {
	pod      *v1.Pod
	phase    v1.PodPhase
	grace    int64
	deleting bool
}

// planShutdown picks the pods a node shutdown stops: every pod the node
// may run (the desired ones and those that left the set and still stop)
// except those that already finished (their terminal phase stands and
// they run nothing). Each gets its own grace period capped by the node's
// budget. A pod not being deleted keeps its current phase, Pending if it
// has none; one already being deleted is only held to the budget: it
// finishes as a deleted pod.
func planShutdown(pods []*v1.Pod, status func(types.UID) (v1.PodStatus, bool), budget time.Duration) []shutdownTarget {
	var out []shutdownTarget
	for _, pod := range pods {
		phase := v1.PodPending
		if st, ok := status(pod.UID); ok && st.Phase != "" {
			phase = st.Phase
		}
		if phase == v1.PodSucceeded || phase == v1.PodFailed {
			continue
		}
		t := shutdownTarget{pod: pod, phase: phase, grace: shutdownGrace(pod, budget)}
		if pod.DeletionTimestamp != nil {
			t.phase, t.deleting = "", true
		}
		out = append(out, t)
	}
	return out
}

// shutdownGrace is the pod's grace period in seconds (its deletion's when
// that is shorter), capped by the node's shutdown budget (whole seconds,
// rounded down).
func shutdownGrace(pod *v1.Pod, budget time.Duration) int64 {
	grace := lifecycle.GracePeriod(pod, nil)
	if g := pod.DeletionGracePeriodSeconds; g != nil {
		grace = min(grace, *g)
	}
	return max(0, min(grace, int64(budget/time.Second)))
}

// markShutdownStatus rewrites the status of a pod stopped by a node
// shutdown: whatever its stopped containers would make of it, the pod
// keeps the phase it had before the shutdown (never Failed or Succeeded
// because of it), with reason NodeShutdown.
func markShutdownStatus(kept v1.PodPhase, s *v1.PodStatus) {
	if kept == "" || kept == v1.PodSucceeded || kept == v1.PodFailed {
		kept = v1.PodPending
	}
	s.Phase = kept
	s.Reason = ReasonNodeShutdown
	s.Message = nodeShutdownMessage
}

// recordsToRestart returns the stored pods that a node shutdown stopped and
// that must start afresh: the mark's pods whose record is not terminal.
// Their records are reset to Pending so that neither the stopped
// containers nor the NodeShutdown status count against them.
func recordsToRestart(mark state.ShutdownMark, recs []state.PodRecord) []state.PodRecord {
	stopped := make(map[types.UID]bool, len(mark.Pods))
	for _, uid := range mark.Pods {
		stopped[uid] = true
	}
	var out []state.PodRecord
	for _, r := range recs {
		if stopped[r.UID] && !r.Terminal {
			out = append(out, r)
		}
	}
	return out
}
