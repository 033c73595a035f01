package node

import (
	"context"
	"time"
)

// plegSafetyPeriod is the relist period while the runtime plugin's event
// stream is open: the events make the PLEG relist at once, so the periodic
// relist is only the safety net for an event lost on the way, as with the
// kubelet's Evented PLEG (whose safety relist is far slower still; ours
// stays well inside the PLEG's three-minute health threshold). Without a
// stream the relist runs every plegPeriod.
const plegSafetyPeriod = 30 * time.Second

// runPLEG relists every plegPeriod, or every plegSafetyPeriod while the
// runtime's event stream is open, and at once whenever n.relist fires,
// until ctx ends; in between it inspects the pods that runtime events and
// ended syncs name (PLEG.Request). The stream's opening and end fire
// n.relist, so the period in force never outlives the state it was chosen
// for by more than one wait.
func (n *Node) runPLEG(ctx context.Context) {
	for {
		_ = n.pleg.Relist(ctx) // errors are retried on the next relist
		period := plegPeriod
		if n.eventsLive.Load() {
			period = plegSafetyPeriod
		}
		if !n.pleg.WaitRelist(ctx, n.clock.After(period), n.relist) {
			return
		}
	}
}

// askRelist makes the PLEG relist soon, without blocking.
func (n *Node) askRelist() {
	select {
	case n.relist <- struct{}{}:
	default:
	}
}
