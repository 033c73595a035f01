package lifecycle

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// PLEG cadences.
const (
	RelistPeriod    = time.Second
	relistThreshold = 3 * time.Minute
	plegChannelSize = 1000
)

// PodLifecycleEventType names a container transition.
type PodLifecycleEventType string

// The events the PLEG emits.
const (
	ContainerStarted PodLifecycleEventType = "ContainerStarted"
	ContainerDied    PodLifecycleEventType = "ContainerDied"
	ContainerRemoved PodLifecycleEventType = "ContainerRemoved"
	ContainerChanged PodLifecycleEventType = "ContainerChanged"
)

// PodLifecycleEvent is one observed transition of a pod's container.
type PodLifecycleEvent struct {
	ID          types.UID
	Type        PodLifecycleEventType
	ContainerID string
}

// PLEG relists the runtime, turns container state changes into events and
// keeps the Cache current. Relist and Inspect are deterministic given the
// runtime's answers and the clock; Run drives them. A runtime that streams
// events names the pods to Inspect (Request), so that relisting becomes a
// fallback, as with the kubelet's Evented PLEG (pleg_inspect.go).
type PLEG struct {
	runtime    Runtime
	cache      *Cache
	clock      Clock
	metrics    *Metrics
	events     chan PodLifecycleEvent
	old        map[types.UID]map[string]ContainerState
	reinspect  map[types.UID]*RunningPod
	lastRelist time.Time
	reqMu      sync.Mutex
	requests   map[types.UID]*request
	requested  chan struct{}
	// held are event requests of pods whose sync was in flight when they
	// were served; skipped counts those found settled. Both belong to the
	// goroutine that serves requests.
	held    map[types.UID]*request
	skipped int
	// Busy, when set before the PLEG runs, reports whether a sync of the
	// pod is in flight (Workers.Syncing). It must not block.
	Busy func(types.UID) bool
	// Discarded counts events dropped because the channel was full.
	Discarded int
}

// NewPLEG returns a PLEG over the runtime that writes the cache.
func NewPLEG(runtime Runtime, cache *Cache, clock Clock, metrics *Metrics) *PLEG {
	return &PLEG{
		runtime: runtime, cache: cache, clock: clock, metrics: metrics,
		events:    make(chan PodLifecycleEvent, plegChannelSize),
		old:       map[types.UID]map[string]ContainerState{},
		reinspect: map[types.UID]*RunningPod{},
		requests:  map[types.UID]*request{},
		held:      map[types.UID]*request{},
		requested: make(chan struct{}, 1),
	}
}

// Events returns the event channel.
func (g *PLEG) Events() <-chan PodLifecycleEvent { return g.events }

// Healthy reports an error if no relist happened for three minutes.
func (g *PLEG) Healthy() error {
	if d := g.clock.Now().Sub(g.lastRelist); !g.lastRelist.IsZero() && d > relistThreshold {
		return fmt.Errorf("pleg was last seen active %s ago; threshold is %s", d, relistThreshold)
	}
	return nil
}

// Relist lists the runtime once, emits events for changed containers,
// re-inspects changed pods into the cache, records the pods the list does
// not show as gone and advances the cache time to the moment before the
// list (which drops the entries of gone pods, see Cache). The cache time serves the inspections
// requested before it, which it forgets. Relist must not be called
// concurrently.
func (g *PLEG) Relist(ctx context.Context) error {
	g.takeRequests()
	clear(g.held)
	start := g.clock.Now()
	if g.metrics != nil && !g.lastRelist.IsZero() {
		g.metrics.PLEGRelistInterval.Observe(start.Sub(g.lastRelist).Seconds())
	}
	g.lastRelist = start
	pods, err := g.runtime.ListPods(ctx)
	if err != nil {
		return fmt.Errorf("relisting runtime pods: %w", err)
	}
	current := make(map[types.UID]map[string]ContainerState, len(pods))
	byUID := make(map[types.UID]*RunningPod, len(pods))
	for _, p := range pods {
		states := make(map[string]ContainerState, len(p.Containers))
		for _, c := range p.Containers {
			states[c.ID] = c.State
		}
		current[p.ID], byUID[p.ID] = states, p
	}
	changed := map[types.UID]*RunningPod{}
	var events []PodLifecycleEvent
	for uid, pod := range g.reinspect {
		changed[uid] = pod
	}
	for uid := range unionKeys(g.old, current) {
		if podChanged(g.old[uid], current[uid]) {
			events = append(events, diffPod(uid, g.old[uid], current[uid])...)
			p := byUID[uid]
			if p == nil {
				p = &RunningPod{ID: uid}
			}
			changed[uid] = p
		}
	}
	g.reinspect = map[types.UID]*RunningPod{}
	for uid, p := range changed {
		// A failed inspection is recorded with its error and this relist's
		// time, and retried on the next relist: the global timestamp below
		// must not make the record from before the change pass for fresh.
		status, err := g.runtime.PodStatus(ctx, uid, p.Name, p.Namespace)
		if err != nil {
			g.reinspect[uid] = p
			err = fmt.Errorf("inspecting pod %s: %w", uid, err)
		}
		g.cache.Set(uid, status, err, start)
	}
	g.old = current
	// A pod this listing does not show is gone, also one whose entry the
	// relist never revisits (a ready sandbox without containers).
	g.cache.forgetAbsent(byUID, start)
	g.cache.UpdateTime(start)
	// Events go out only once the cache holds the statuses they announce:
	// a worker woken by an event reads a status newer than its last sync,
	// and the cache's global timestamp would otherwise hand it the old one.
	for _, ev := range events {
		g.emit(ev)
	}
	if g.metrics != nil {
		g.metrics.PLEGRelistDuration.Observe(g.clock.Now().Sub(start).Seconds())
		g.metrics.PLEGLastSeen.Set(float64(start.Unix()))
	}
	return nil
}

func eventFor(old ContainerState, had bool, new ContainerState, has bool) (PodLifecycleEventType, bool) {
	switch {
	case has && new == ContainerRunning:
		return ContainerStarted, true
	case has && new == ContainerExited:
		return ContainerDied, true
	case has && new == ContainerUnknown:
		return ContainerChanged, true
	case !has && had && old == ContainerRunning:
		return ContainerDied, true
	case !has && had:
		return ContainerRemoved, true
	}
	return "", false
}

func (g *PLEG) emit(ev PodLifecycleEvent) {
	select {
	case g.events <- ev:
	default:
		g.Discarded++
		if g.metrics != nil {
			g.metrics.PLEGDiscardEvents.Inc()
		}
	}
}

func unionKeys[K comparable, V any](a, b map[K]V) map[K]struct{} {
	out := make(map[K]struct{}, len(a)+len(b))
	for k := range a {
		out[k] = struct{}{}
	}
	for k := range b {
		out[k] = struct{}{}
	}
	return out
}
