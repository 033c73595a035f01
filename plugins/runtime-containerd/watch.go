package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// subscriberBuffer is how many events a slow stream may lag behind before
// it misses some; the stream is a hint, so dropping is allowed.
const subscriberBuffer = 256

// Timing of the watcher. A subscription that breaks (containerd restarts)
// is made again with back-off. A containerd event comes before CRI has
// updated its view, so the object is looked up again, with back-off, until
// CRI shows what the event told of or confirmTimeout passes (then the
// periodic resync finds it); the next event of the same object (the task's
// delete, which CRI makes just before it records an exit) restarts the
// back-off.
const (
	resubscribeInitial = 100 * time.Millisecond
	resubscribeMax     = 5 * time.Second
	confirmInitial     = 2 * time.Millisecond
	confirmMax         = 100 * time.Millisecond
	confirmTimeout     = 10 * time.Second
)

// resyncPeriod is how often the watcher lists everything again while
// subscribed, the safety net under the snapshot it serves listings from: a
// change whose containerd event went missing, or that CRI showed only
// after confirmTimeout, is found and published within it.
const resyncPeriod = 30 * time.Second

// watcher turns containerd's state into events. While at least one stream
// subscribes, one goroutine follows containerd's own event service
// (ctrdevents.go) and looks each event's object up in CRI (observe.go).
// Listing every sandbox and container and diffing the listing (diff.go) is
// only the resync: it gives the baseline when the goroutine starts, and
// finds what changed while a broken subscription was being made again.
// The plugin's own successful calls are reported at once (note). Every
// event, whatever its source, goes through one snapshot, so none is
// reported twice: a change the snapshot already shows makes no event.
// Nobody subscribed, nothing runs. While the snapshot is known current it
// also answers the contract's listings (serve.go).
type watcher struct {
	src source
	log hclog.Logger
	now func() time.Time
	// resyncEvery is resyncPeriod; tests may shorten it.
	resyncEvery time.Duration

	mu   sync.Mutex
	subs map[chan Event]struct{}
	run  *watchRun // nil while nobody subscribes
	// inflight counts the plugin's calls in flight that make, start, stop
	// or remove something, by ID ("" for creations, whose ID comes with
	// the answer). An event they cause waits for the call's note rather
	// than looking the object up while CRI is still changing it: a stop
	// or a removal lasts until the exit or the deletion that containerd
	// tells of at its start, and looking up meanwhile only polls CRI.
	inflight map[string]int
	changed  chan struct{} // closed and replaced on every note and call end
}

// source is containerd, as the watcher sees it.
type source interface {
	// list lists every sandbox and container.
	list(ctx context.Context) (snapshot, error)
	// lookup tells what CRI knows of one ID.
	lookup(ctx context.Context, id string) (object, error)
	// subscribe returns once a subscription to containerd's events is
	// live; it lasts until ctx ends or it breaks.
	subscribe(ctx context.Context) (taskEvents, error)
}

// watchRun is one life of the watch goroutine, from the first subscriber
// to the last one leaving. Its fields other than the channels and listMu
// are guarded by watcher.mu.
type watchRun struct {
	cancel context.CancelFunc
	ready  chan struct{} // closed once the first subscription and listing are in (or failed)
	done   chan struct{} // closed when the goroutine returns
	err    error         // the start's error, set before ready closes

	// listMu serializes the listings (a re-subscription's, the periodic
	// resync's): they share touched.
	listMu  sync.Mutex
	last    snapshot
	touched map[string]bool // objects changed since the listing in progress began; nil between listings
	early   []change        // the plugin's changes during the baseline listing, applied once it is in
	// exits are the exits reported from containerd's events that CRI may
	// not show yet, ooms the containers an OOM kill hit (exits.go).
	exits map[string]exitFact
	ooms  map[string]bool

	// The snapshot is current, and serves listings, while the
	// subscription is live and nothing made it stale since the last
	// listing. stale: a change the snapshot could not record, or a new
	// backend; dirty counts those, so that a listing begun before one
	// does not clear it; resets counts new backends, so that a
	// subscription made on the old one is given up.
	live          bool
	stale         bool
	dirty, resets uint64
	stopSub       context.CancelFunc // ends the live subscription
	resyncNow     chan struct{}      // asks the periodic resync to list at once
	// work holds the IDs being handled; one goroutine per ID handles its
	// events in order (workers).
	work    map[string]*idWork
	workers sync.WaitGroup
}

// idWork is the events of one ID waiting to be handled, and a count of
// the other changes to its object (notes, resyncs): a look-up that one
// overtook is stale.
type idWork struct {
	queue []taskEvent
	gen   uint64
	more  chan struct{} // signalled when an event joins the queue
}

func newWatcher(src source, log hclog.Logger) *watcher {
	return &watcher{src: src, log: log, now: time.Now, resyncEvery: resyncPeriod, subs: map[chan Event]struct{}{}, inflight: map[string]int{}, changed: make(chan struct{})}
}

// begin marks a call that makes (id "") or starts, stops or removes (id)
// an object in flight; the function it returns ends it.
func (w *watcher) begin(id string) func() {
	w.mu.Lock()
	w.inflight[id]++
	w.mu.Unlock()
	return sync.OnceFunc(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.inflight[id]--; w.inflight[id] == 0 {
			delete(w.inflight, id)
		}
		w.wake()
	})
}

// wake tells waiting handlers that something changed; the caller holds w.mu.
func (w *watcher) wake() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// waitsForCall reports whether ev is likely the doing of a call of the
// plugin still in flight; the caller holds w.mu.
func (w *watcher) waitsForCall(run *watchRun, ev taskEvent) bool {
	if w.inflight[ev.id] > 0 {
		return true
	}
	c, isContainer := run.last.containers[ev.id]
	if isContainer && w.inflight[c.sandboxID] > 0 {
		return true // stopping or removing the sandbox stops or removes its containers
	}
	_, isSandbox := run.last.sandboxes[ev.id]
	return !isContainer && !isSandbox && ev.topic != topicRemoved && w.inflight[""] > 0
}

// Subscribe returns a channel of the changes made from now on and a
// function that ends the subscription. It returns once the watcher follows
// containerd's events and has a listing to compare with, so no later
// change is missed; if either fails, so does Subscribe. ctx bounds the
// wait only: the watch goroutine runs until the last subscriber leaves.
func (w *watcher) Subscribe(ctx context.Context) (<-chan Event, func(), error) {
	ch := make(chan Event, subscriberBuffer)
	w.mu.Lock()
	w.subs[ch] = struct{}{}
	run := w.run
	if run == nil {
		// The goroutine outlives this call: it must not end with ctx.
		runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		run = &watchRun{cancel: cancel, ready: make(chan struct{}), done: make(chan struct{}), resyncNow: make(chan struct{}, 1)}
		w.run = run
		go w.loop(runCtx, run)
	}
	w.mu.Unlock()
	unsubscribe := sync.OnceFunc(func() { w.unsubscribe(ch) })
	select {
	case <-run.ready:
	case <-ctx.Done():
		unsubscribe()
		return nil, nil, fmt.Errorf("%w: waiting for the event subscription: %w", errDeadline, ctx.Err())
	}
	if run.err != nil {
		unsubscribe()
		return nil, nil, run.err
	}
	return ch, unsubscribe, nil
}

// unsubscribe removes ch and, with it the last, stops the goroutine and
// waits for it.
func (w *watcher) unsubscribe(ch chan Event) {
	w.mu.Lock()
	delete(w.subs, ch)
	run := w.run
	if len(w.subs) > 0 || run == nil {
		w.mu.Unlock()
		return
	}
	w.run = nil
	w.mu.Unlock()
	run.cancel()
	<-run.done
}

// stopAll ends the goroutine; subscribers get no more events.
func (w *watcher) stopAll() {
	w.mu.Lock()
	run := w.run
	w.run = nil
	w.mu.Unlock()
	if run != nil {
		run.cancel()
		<-run.done
	}
}

// watching reports whether a watch run exists, so that a change the plugin
// makes is worth looking up for the snapshot.
func (w *watcher) watching() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.run != nil
}

// note reports a change the plugin made itself. One made during the
// baseline listing is applied once the listing is in.
func (w *watcher) note(c change) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.wake()
	run := w.run
	switch {
	case run == nil:
	case run.last.sandboxes != nil:
		w.record(run, c)
	case run.touched != nil:
		run.early = append(run.early, c)
	}
}

// record applies c to the snapshot and publishes its events; a change the
// snapshot cannot record makes it stale. The caller holds w.mu.
func (w *watcher) record(run *watchRun, c change) {
	if run.last.lacks(c) {
		w.staleLocked(run)
		return
	}
	events := run.last.apply(c, w.now().UnixNano())
	w.touch(run, events)
	w.publish(events)
}

// invalidate tells the watcher that the snapshot may miss a change (a call
// of the plugin failed and may have changed something anyway): listings go
// to CRI until it has been listed again, which it is at once.
func (w *watcher) invalidate() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.run != nil {
		w.staleLocked(w.run)
	}
}

// notFound tells the watcher that CRI does not know the object id: a
// snapshot that still has it is stale. (The answer is not taken as a
// removal: containerd reports some failures of an existing object as "not
// found" too.)
func (w *watcher) notFound(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	run := w.run
	if run == nil {
		return
	}
	_, isContainer := run.last.containers[id]
	_, isSandbox := run.last.sandboxes[id]
	if isContainer || isSandbox {
		w.staleLocked(run)
	}
}

// staleLocked marks run's snapshot stale and asks for a resync; the caller
// holds w.mu.
func (w *watcher) staleLocked(run *watchRun) {
	run.stale = true
	run.dirty++
	select {
	case run.resyncNow <- struct{}{}:
	default:
	}
}

// swap runs store, which installs a new backend, and makes the watcher
// start over on it: the snapshot is not served until a subscription to the
// new backend and its listing are in. Under w.mu, so a subscription begun
// before store is told apart from one begun after.
func (w *watcher) swap(store func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	store()
	run := w.run
	if run == nil {
		return
	}
	run.resets++
	run.stale = true
	run.dirty++
	if run.stopSub != nil {
		run.stopSub() // the loop subscribes again
	}
}

// touch records that events changed their objects in the snapshot, so
// that a listing begun before keeps them (keep) and a look-up in flight
// for them is stale. The caller holds w.mu.
func (w *watcher) touch(run *watchRun, events []Event) {
	for _, ev := range events {
		id := ev.ContainerID
		if id == "" {
			id = ev.SandboxID
		}
		if run.touched != nil {
			run.touched[id] = true
		}
		if wk := run.work[id]; wk != nil {
			wk.gen++
		}
	}
}

func (w *watcher) loop(ctx context.Context, run *watchRun) {
	defer close(run.done)
	defer run.workers.Wait() // they end with ctx
	events, stop, err := w.follow(ctx, run)
	w.mu.Lock()
	if err != nil {
		run.err = fmt.Errorf("watch: %w", err)
		if w.run == run {
			w.run = nil
		}
	}
	close(run.ready)
	w.mu.Unlock()
	if err != nil {
		run.cancel()
		return
	}
	run.workers.Go(func() { w.resyncEveryPeriod(ctx, run) })
	for {
		err := w.consume(ctx, run, events)
		w.mu.Lock()
		run.live = false
		run.stopSub = nil
		w.mu.Unlock()
		stop()
		if ctx.Err() != nil {
			return
		}
		w.log.Warn("watch: containerd's event subscription ended; subscribing again", "err", err)
		delay := resubscribeInitial
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
			if events, stop, err = w.follow(ctx, run); err == nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
			w.log.Debug("watch: subscribing again failed", "err", err, "retry in", delay)
			delay = min(2*delay, resubscribeMax)
		}
		w.log.Info("watch: following containerd's events again")
	}
}

// follow subscribes to containerd's events and then lists, so that the
// listing misses nothing the subscription does not show (relist). stop
// ends the subscription. A new backend installed meanwhile fails it.
func (w *watcher) follow(ctx context.Context, run *watchRun) (taskEvents, func(), error) {
	w.mu.Lock()
	resets := run.resets
	w.mu.Unlock()
	subCtx, stop := context.WithCancel(ctx)
	events, err := w.src.subscribe(subCtx)
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("subscribe to containerd's events: %w", err)
	}
	err = w.relist(ctx, run, func() error {
		if run.resets != resets {
			return fmt.Errorf("%w: the backend changed while subscribing", errUnavailable)
		}
		run.live, run.stopSub = true, stop
		return nil
	})
	if err != nil {
		stop()
		return nil, nil, err
	}
	return events, stop, nil
}

// relist lists every sandbox and container and makes the listing the
// snapshot: the first one is the baseline, a later one publishes what
// changed since the last state known, keeping what was changed during the
// listing. commit, when set, runs under w.mu before the listing is used
// and may refuse it. The snapshot is current afterwards unless something
// made it stale during the listing.
func (w *watcher) relist(ctx context.Context, run *watchRun, commit func() error) error {
	run.listMu.Lock()
	defer run.listMu.Unlock()
	w.mu.Lock()
	run.touched = map[string]bool{}
	dirty := run.dirty
	w.mu.Unlock()
	cur, err := w.src.list(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	touched, early := run.touched, run.early
	run.touched, run.early = nil, nil
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	if commit != nil {
		if err := commit(); err != nil {
			return err
		}
	}
	run.stale = run.dirty != dirty
	if run.last.sandboxes == nil {
		run.last = cur
		for _, c := range early {
			w.record(run, c)
		}
		return nil
	}
	cur.keep(run.last, touched)
	run.keepExits(cur)
	changes := diff(run.last, cur, w.now().UnixNano())
	run.last = cur
	for _, wk := range run.work {
		wk.gen++
	}
	w.publish(changes)
	return nil
}

// resyncEveryPeriod lists everything again every resyncEvery, and at once
// when the snapshot went stale, while the subscription is live (a broken
// one lists when it is made again).
func (w *watcher) resyncEveryPeriod(ctx context.Context, run *watchRun) {
	tick := time.NewTicker(w.resyncEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-run.resyncNow:
		}
		w.mu.Lock()
		live := run.live
		w.mu.Unlock()
		if !live {
			continue
		}
		if err := w.relist(ctx, run, nil); err != nil && ctx.Err() == nil {
			w.log.Warn("watch: the periodic resync failed; trying again at the next", "err", err)
		}
	}
}

// consume handles the subscription's events until it breaks or ctx ends.
func (w *watcher) consume(ctx context.Context, run *watchRun, events taskEvents) error {
	for {
		ev, err := events.next()
		if err != nil {
			return err
		}
		w.dispatch(ctx, run, ev)
	}
}

// dispatch hands ev to the goroutine of its ID, starting one if none runs:
// a slow look-up of one object holds up no other.
func (w *watcher) dispatch(ctx context.Context, run *watchRun, ev taskEvent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if run.work == nil {
		run.work = map[string]*idWork{}
	}
	if wk := run.work[ev.id]; wk != nil {
		wk.queue = append(wk.queue, ev)
		select {
		case wk.more <- struct{}{}:
		default:
		}
		return
	}
	wk := &idWork{more: make(chan struct{}, 1)}
	run.work[ev.id] = wk
	run.workers.Go(func() {
		for {
			w.handle(ctx, run, wk, ev)
			w.mu.Lock()
			if len(wk.queue) == 0 || ctx.Err() != nil {
				delete(run.work, ev.id)
				w.mu.Unlock()
				return
			}
			ev, wk.queue = wk.queue[0], wk.queue[1:]
			w.mu.Unlock()
		}
	})
}

// handle looks ev's object up until CRI shows what ev tells of, and
// publishes what changed. An event the snapshot already shows needs no
// look-up, nor does one that a call of the plugin in flight will note.
func (w *watcher) handle(ctx context.Context, run *watchRun, wk *idWork, ev taskEvent) {
	delay := confirmInitial
	deadline := time.Now().Add(confirmTimeout)
	w.mu.Lock()
	switch {
	case ev.topic == topicOOM:
		w.noteOOM(run, ev.id)
		w.mu.Unlock()
		return
	case w.exitFirst(run, ev):
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	for {
		w.mu.Lock()
		settled, waits, changed, gen := run.last.settled(ev), w.waitsForCall(run, ev), w.changed, wk.gen
		w.mu.Unlock()
		if settled {
			return
		}
		if waits {
			select {
			case <-ctx.Done():
				return
			case <-changed:
			}
			deadline = time.Now().Add(confirmTimeout)
			continue
		}
		obj, err := w.src.lookup(ctx, ev.id)
		if err == nil {
			w.mu.Lock()
			if wk.gen != gen {
				// The object changed during the look-up: look again.
				w.mu.Unlock()
				continue
			}
			events, done := run.last.observe(ev, obj, w.now().UnixNano())
			w.touch(run, events)
			w.publish(events)
			w.mu.Unlock()
			if done {
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			w.log.Warn("watch: CRI does not show what containerd told of; the periodic resync will", "id", ev.id, "err", err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
			delay = min(2*delay, confirmMax)
		case <-wk.more:
			// containerd tells more of the object: CRI deletes an exited
			// task just before it records the exit, so look again soon.
			delay = confirmInitial
		}
	}
}

// publish hands events to every subscriber with room for them. The caller
// holds w.mu, which keeps the order of events the same for everyone.
func (w *watcher) publish(events []Event) {
	for _, ev := range events {
		for ch := range w.subs {
			select {
			case ch <- ev:
			default: // a slow subscriber misses the event
			}
		}
	}
}
