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

// watcher turns containerd's state into events. containerd 1.6 has no CRI
// event API, so while at least one stream subscribes, one goroutine lists
// sandboxes and containers every watch interval and diffs the listing
// against the previous one. The plugin's own successful calls are reported
// at once (note), and recorded so that the next listing does not repeat
// them. Nobody subscribed, nothing runs.
type watcher struct {
	lister lister
	log    hclog.Logger
	now    func() time.Time

	mu   sync.Mutex
	subs map[chan Event]struct{}
	run  *watchRun // nil while nobody subscribes
}

// lister lists containerd's state and tells how often to do it.
type lister interface {
	list(ctx context.Context) (snapshot, error)
	watchInterval() time.Duration
}

// watchRun is one life of the watch goroutine, from the first subscriber
// to the last one leaving. Its fields other than the channels are guarded
// by watcher.mu.
type watchRun struct {
	cancel context.CancelFunc
	ready  chan struct{} // closed once the first listing is in (or failed)
	done   chan struct{} // closed when the goroutine returns
	err    error         // the first listing's error, set before ready closes

	last    snapshot
	touched map[string]bool // objects the plugin changed since the current listing began
	failing bool            // the last listing failed (logged once)
}

func newWatcher(l lister, log hclog.Logger) *watcher {
	return &watcher{lister: l, log: log, now: time.Now, subs: map[chan Event]struct{}{}}
}

// Subscribe returns a channel of the changes made from now on and a
// function that ends the subscription. It returns once the watcher has a
// listing to compare with, so no later change is missed; if that first
// listing fails, so does Subscribe. ctx bounds the wait only: the watch
// goroutine runs until the last subscriber leaves.
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
		return nil, nil, fmt.Errorf("%w: waiting for the first listing: %w", errDeadline, ctx.Err())
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
	for _, ev := range events {
		id := ev.ContainerID
		if id == "" {
			id = ev.SandboxID
		}
		run.touched[id] = true
	}
	w.publish(events)
}

func (w *watcher) loop(ctx context.Context, run *watchRun) {
	defer close(run.done)
	first, err := w.lister.list(ctx)
	w.mu.Lock()
	if err != nil {
		run.err = fmt.Errorf("watch: first listing: %w", err)
		if w.run == run {
			w.run = nil
		}
	} else {
		run.last, run.touched = first, map[string]bool{}
	}
	close(run.ready)
	w.mu.Unlock()
	if err != nil {
		run.cancel()
		return
	}
	timer := time.NewTimer(w.lister.watchInterval())
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		w.poll(ctx, run)
		timer.Reset(w.lister.watchInterval())
	}
}

// poll lists once and publishes what changed.
func (w *watcher) poll(ctx context.Context, run *watchRun) {
	w.mu.Lock()
	clear(run.touched)
	w.mu.Unlock()
	cur, err := w.lister.list(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.run != run {
		return
	}
	if err != nil {
		if !run.failing && ctx.Err() == nil {
			w.log.Warn("watch: listing failed; events wait until it works again", "err", err)
		}
		run.failing = true
		return
	}
	if run.failing {
		w.log.Info("watch: listing works again")
		run.failing = false
	}
	cur.keep(run.last, run.touched)
	events := diff(run.last, cur, w.now().UnixNano())
	run.last = cur
	w.publish(events)
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
