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
// host's relist finds it); the next event of the same object (the task's
// delete, which CRI makes just before it records an exit) restarts the
// back-off.
const (
	resubscribeInitial = 100 * time.Millisecond
	resubscribeMax     = 5 * time.Second
	confirmInitial     = 2 * time.Millisecond
	confirmMax         = 100 * time.Millisecond
	confirmTimeout     = 10 * time.Second
)

// watcher turns containerd's state into events. While at least one stream
// subscribes, one goroutine follows containerd's own event service
// (ctrdevents.go) and looks each event's object up in CRI (observe.go).
// Listing every sandbox and container and diffing the listing (diff.go) is
// only the resync: it gives the baseline when the goroutine starts, and
// finds what changed while a broken subscription was being made again.
// The plugin's own successful calls are reported at once (note). Every
// event, whatever its source, goes through one snapshot, so none is
// reported twice: a change the snapshot already shows makes no event.
// Nobody subscribed, nothing runs.
type watcher struct {
	src source
	log hclog.Logger
	now func() time.Time

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
// to the last one leaving. Its fields other than the channels are guarded
// by watcher.mu.
type watchRun struct {
	cancel context.CancelFunc
	ready  chan struct{} // closed once the first subscription and listing are in (or failed)
	done   chan struct{} // closed when the goroutine returns
	err    error         // the start's error, set before ready closes

	last    snapshot
	touched map[string]bool // objects changed since the listing in progress began; nil between listings
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
	return &watcher{src: src, log: log, now: time.Now, subs: map[chan Event]struct{}{}, inflight: map[string]int{}, changed: make(chan struct{})}
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
	_, isContainer := run.last.containers[ev.id]
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
		run = &watchRun{cancel: cancel, ready: make(chan struct{}), done: make(chan struct{})}
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

// note reports a change the plugin made itself.
func (w *watcher) note(c change) {
	w.mu.Lock()
	defer w.mu.Unlock()
	run := w.run
	if run == nil || run.last.sandboxes == nil {
		return
	}
	events := run.last.apply(c, w.now().UnixNano())
	w.touch(run, events)
	w.publish(events)
	w.wake()
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
	events, stop, err := w.follow(ctx, run, true)
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
	for {
		err := w.consume(ctx, run, events)
		stop()
		if ctx.Err() != nil {
			return
		}
		w.log.Warn("watch: containerd's event subscription broke; subscribing again", "err", err)
		delay := resubscribeInitial
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
			if events, stop, err = w.follow(ctx, run, false); err == nil {
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
// listing misses nothing the subscription does not show: the first
// listing is the baseline, a later one publishes what changed since the
// last state known. stop ends the subscription.
func (w *watcher) follow(ctx context.Context, run *watchRun, baseline bool) (taskEvents, func(), error) {
	subCtx, stop := context.WithCancel(ctx)
	events, err := w.src.subscribe(subCtx)
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("subscribe to containerd's events: %w", err)
	}
	w.mu.Lock()
	run.touched = map[string]bool{}
	w.mu.Unlock()
	cur, err := w.src.list(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	touched := run.touched
	run.touched = nil
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("list: %w", err)
	}
	if baseline {
		run.last = cur
		return events, stop, nil
	}
	cur.keep(run.last, touched)
	changes := diff(run.last, cur, w.now().UnixNano())
	run.last = cur
	for _, wk := range run.work {
		wk.gen++
	}
	w.publish(changes)
	return events, stop, nil
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
			w.log.Warn("watch: CRI does not show what containerd told of; the relist will", "id", ev.id, "err", err)
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
