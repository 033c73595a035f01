package lifecycle

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// PodRef names one pod for the PLEG to inspect.
type PodRef struct {
	UID             types.UID
	Name, Namespace string
}

// Request asks the PLEG to inspect one pod: a runtime event named it, or
// a sync of it just ended. It never blocks and is safe for concurrent
// use; requests for the same pod that wait together are inspected once.
// Requested fires when requests wait; InspectRequested serves them.
func (g *PLEG) Request(ref PodRef) {
	if ref.UID == "" {
		return
	}
	g.reqMu.Lock()
	g.requests[ref.UID] = ref
	g.reqMu.Unlock()
	select {
	case g.requested <- struct{}{}:
	default:
	}
}

// Requested fires when inspection requests wait for InspectRequested.
func (g *PLEG) Requested() <-chan struct{} { return g.requested }

// takeRequests returns the waiting requests and forgets them.
func (g *PLEG) takeRequests() map[types.UID]PodRef {
	g.reqMu.Lock()
	defer g.reqMu.Unlock()
	reqs := g.requests
	g.requests = map[types.UID]PodRef{}
	return reqs
}

// InspectRequested inspects every pod a request names. Like Relist, it
// must not run concurrently with Relist or with itself.
func (g *PLEG) InspectRequested(ctx context.Context) {
	for _, ref := range g.takeRequests() {
		_ = g.Inspect(ctx, ref) // a failed inspection is retried by the next relist
	}
}

// Inspect reads one pod's status, records it in the cache with the time
// taken before the read, and emits the events of its containers' changes
// since the PLEG last saw them. Only that pod's entry becomes newer: the
// cache's global time stays, so no other pod passes for fresh. A failed
// inspection is recorded with its error and retried by the next relist.
// It must not run concurrently with Relist.
func (g *PLEG) Inspect(ctx context.Context, ref PodRef) error {
	start := g.clock.Now()
	status, err := g.runtime.PodStatus(ctx, ref.UID, ref.Name, ref.Namespace)
	if err != nil {
		err = fmt.Errorf("inspecting pod %s: %w", ref.UID, err)
		g.reinspect[ref.UID] = &RunningPod{ID: ref.UID, Name: ref.Name, Namespace: ref.Namespace}
		g.cache.Set(ref.UID, nil, err, start)
		return err
	}
	g.cache.Set(ref.UID, status, nil, start)
	delete(g.reinspect, ref.UID)
	current := make(map[string]ContainerState, len(status.ContainerStatuses))
	for _, c := range status.ContainerStatuses {
		current[c.ID] = c.State
	}
	events := diffPod(ref.UID, g.old[ref.UID], current)
	if len(current) == 0 {
		delete(g.old, ref.UID)
	} else {
		g.old[ref.UID] = current
	}
	// As in Relist, the events go out after the cache holds the status.
	for _, ev := range events {
		g.emit(ev)
	}
	return nil
}

// podChanged reports whether any container of a pod changed its state,
// appeared or went away from old to current.
func podChanged(old, current map[string]ContainerState) bool {
	if len(old) != len(current) {
		return true
	}
	for id, s := range old {
		if c, ok := current[id]; !ok || c != s {
			return true
		}
	}
	return false
}

// diffPod returns the events of the changes from old to current of one
// pod's containers.
func diffPod(uid types.UID, old, current map[string]ContainerState) []PodLifecycleEvent {
	var events []PodLifecycleEvent
	for id := range unionKeys(old, current) {
		oldState, had := old[id]
		newState, has := current[id]
		if had && has && oldState == newState {
			continue
		}
		if typ, ok := eventFor(oldState, had, newState, has); ok {
			events = append(events, PodLifecycleEvent{ID: uid, Type: typ, ContainerID: id})
		}
	}
	return events
}

// Run relists every period and whenever relist fires (nil disables it),
// and inspects the requested pods as soon as requests wait, until ctx
// ends. A runtime that streams events feeds Request, so that the period
// is only the safety net.
func (g *PLEG) Run(ctx context.Context, period time.Duration, relist <-chan struct{}) {
	for {
		_ = g.Relist(ctx) // errors are retried on the next relist
		if !g.WaitRelist(ctx, g.clock.After(period), relist) {
			return
		}
	}
}

// WaitRelist serves inspection requests until due or relist fires, and
// then reports true; false means ctx ended. A driver that chooses the
// period itself calls Relist and WaitRelist in turn.
func (g *PLEG) WaitRelist(ctx context.Context, due <-chan time.Time, relist <-chan struct{}) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-g.requested:
			g.InspectRequested(ctx)
		case <-due:
			return true
		case <-relist:
			return true
		}
	}
}
