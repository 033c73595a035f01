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

// Hint is what a runtime event tells of one object of a pod. A container's
// hint names it and the state it reached, or its removal; a sandbox's
// names no container and is never taken as settled (the PLEG keeps no
// view of sandboxes).
type Hint struct {
	ContainerID string
	State       ContainerState
	Removed     bool
}

// settledBy reports whether the PLEG's last view of a pod's containers
// already shows what h tells of, so that inspecting the pod for it would
// find nothing new: the container is gone, or it is known in the state
// the hint tells of or a later one (states only move forward: a container
// ID is never reused).
func (h Hint) settledBy(view map[string]ContainerState) bool {
	if h.ContainerID == "" {
		return false
	}
	s, known := view[h.ContainerID]
	if h.Removed {
		return !known
	}
	return known && stateRank(s) >= stateRank(h.State) && stateRank(h.State) > 0
}

// stateRank orders the states a container goes through; UNKNOWN ranks
// below all, so that it settles nothing.
func stateRank(s ContainerState) int {
	switch s {
	case ContainerCreated:
		return 1
	case ContainerRunning:
		return 2
	case ContainerExited:
		return 3
	}
	return 0
}

// request is what waits to be inspected of one pod: a sync's end (forced)
// or the hints of runtime events.
type request struct {
	ref    PodRef
	forced bool
	hints  []Hint
}

// Request asks the PLEG to inspect one pod because a sync of it just
// ended: the next sync needs a status newer than its end. It never blocks
// and is safe for concurrent use; requests for the same pod that wait
// together are inspected once. Requested fires when requests wait;
// InspectRequested serves them.
func (g *PLEG) Request(ref PodRef) { g.request(ref, true, nil) }

// RequestEvent asks the PLEG to inspect one pod because a runtime event
// told of h. Unlike a sync's request, it is skipped when the PLEG's view
// of the pod already shows h (the runtime reports the host's own calls
// too, and those the inspection after the sync has seen), and held while
// a sync of the pod is in flight (Busy): that sync's end asks for an
// inspection that reads the runtime after the event, so one inspection
// serves both. It never blocks and is safe for concurrent use.
func (g *PLEG) RequestEvent(ref PodRef, h Hint) { g.request(ref, false, []Hint{h}) }

// Release asks the PLEG to judge the event requests it held for a sync of
// the pod that ended without asking for an inspection (it finished the
// pod); it inspects nothing by itself. It never blocks.
func (g *PLEG) Release(ref PodRef) { g.request(ref, false, nil) }

func (g *PLEG) request(ref PodRef, forced bool, hints []Hint) {
	if ref.UID == "" {
		return
	}
	g.reqMu.Lock()
	r := g.requests[ref.UID]
	if r == nil {
		r = &request{}
		g.requests[ref.UID] = r
	}
	if r.ref.Name == "" {
		r.ref = ref
	} else {
		r.ref.UID = ref.UID
	}
	r.forced = r.forced || forced
	r.hints = append(r.hints, hints...)
	g.reqMu.Unlock()
	select {
	case g.requested <- struct{}{}:
	default:
	}
}

// Requested fires when inspection requests wait for InspectRequested.
func (g *PLEG) Requested() <-chan struct{} { return g.requested }

// takeRequests returns the waiting requests and forgets them.
func (g *PLEG) takeRequests() map[types.UID]*request {
	g.reqMu.Lock()
	defer g.reqMu.Unlock()
	reqs := g.requests
	g.requests = map[types.UID]*request{}
	return reqs
}

// InspectRequested inspects every pod a request names, but for those
// whose every hint the PLEG's view already shows, and holds the hints of
// a pod whose sync is in flight until the next call (a sync's end always
// makes one). Like Relist, it must not run concurrently with Relist or
// with itself.
func (g *PLEG) InspectRequested(ctx context.Context) {
	reqs := g.takeRequests()
	for uid, held := range g.held {
		if r := reqs[uid]; r != nil {
			r.hints = append(r.hints, held.hints...)
		} else {
			reqs[uid] = held
		}
	}
	clear(g.held)
	for uid, r := range reqs {
		if !r.forced {
			if len(r.hints) == 0 {
				continue // a release with nothing held
			}
			if g.Busy != nil && g.Busy(uid) {
				g.held[uid] = r
				continue
			}
			if g.settled(uid, r.hints) {
				g.skipped++
				continue
			}
		}
		_ = g.Inspect(ctx, r.ref) // a failed inspection is retried by the next relist
	}
}

// settled reports whether the PLEG's view of the pod shows every hint.
func (g *PLEG) settled(uid types.UID, hints []Hint) bool {
	if _, failed := g.reinspect[uid]; failed {
		return false
	}
	for _, h := range hints {
		if !h.settledBy(g.old[uid]) {
			return false
		}
	}
	return true
}

// Skipped is how many event requests InspectRequested found settled; it
// must be read from the goroutine that serves requests.
func (g *PLEG) Skipped() int { return g.skipped }

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
