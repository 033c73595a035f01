package events

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// DefaultCapacity is the ring's size when Options.Capacity is zero.
const DefaultCapacity = 1000

// DefaultWatchBuffer is each watcher's buffer when Options.WatchBuffer is
// zero.
const DefaultWatchBuffer = 256

// Options configure a Ring.
type Options struct {
	// Capacity is the most entries kept; DefaultCapacity when zero.
	Capacity int
	// WatchBuffer is how many events a watcher may lag behind before it
	// loses events; DefaultWatchBuffer when zero.
	WatchBuffer int
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Registry, when set, receives the ring's metric,
	// podhost_events_watch_dropped_total.
	Registry prometheus.Registerer
}

// DroppedMetric is the name of the counter of events lost by watchers
// that did not keep up.
const DroppedMetric = "podhost_events_watch_dropped_total"

// Ring is a bounded, de-duplicating event log. It is safe for concurrent
// use; recording never blocks on readers.
type Ring struct {
	now     func() time.Time
	wbuf    int
	mu      sync.Mutex
	buf     []Event // circular; len(buf) == capacity
	start   int     // index of the oldest entry
	n       int     // entries held
	seq     uint64
	last    map[Object]uint64 // newest entry's Seq per object
	watches map[*watcher]struct{}
	dropped prometheus.Counter
	// forward, when set, is also given every pod event (ForwardPods).
	forward atomic.Pointer[func(pod *v1.Pod, eventType, reason, message string)]
}

type watcher struct{ ch chan Event }

var _ lifecycle.Recorder = (*Ring)(nil)

// New returns an empty ring.
func New(o Options) *Ring {
	if o.Capacity <= 0 {
		o.Capacity = DefaultCapacity
	}
	if o.WatchBuffer <= 0 {
		o.WatchBuffer = DefaultWatchBuffer
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &Ring{now: o.Now, wbuf: o.WatchBuffer, buf: make([]Event, o.Capacity),
		last: map[Object]uint64{}, watches: map[*watcher]struct{}{},
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: DroppedMetric,
			Help: "Events not delivered to a watcher (podhost events -w, the local API's event watch) because its buffer was full.",
		})}
	if o.Registry != nil {
		o.Registry.MustRegister(r.dropped)
	}
	return r
}

// Event records an event about a pod; it implements lifecycle.Recorder. A
// nil pod is recorded against the node.
func (r *Ring) Event(pod *v1.Pod, eventType, reason, message string) {
	obj := Object{Kind: KindNode}
	if pod != nil {
		obj = Object{Kind: KindPod, Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
	}
	r.Record(obj, eventType, reason, message)
	if f := r.forward.Load(); f != nil && pod != nil {
		(*f)(pod, eventType, reason, message)
	}
}

// ForwardPods makes every later pod event go to f too, after the ring
// recorded it (Kubernetes mode: to the API server, which kubectl describe
// pod reads). f must not block; nil stops forwarding.
func (r *Ring) ForwardPods(f func(pod *v1.Pod, eventType, reason, message string)) {
	if f == nil {
		r.forward.Store(nil)
		return
	}
	r.forward.Store(&f)
}

// Record records an event about any object and returns the entry as
// stored (with its Count).
func (r *Ring) Record(obj Object, eventType, reason, message string) Event {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.repeatLocked(obj, eventType, reason, message)
	if e != nil {
		e.Count++
		e.LastTime = now
	} else {
		e = r.appendLocked(Event{Type: eventType, Reason: reason, Message: message, Object: obj,
			Count: 1, FirstTime: now, LastTime: now})
	}
	out := *e
	for w := range r.watches {
		select {
		case w.ch <- out:
		default:
			r.dropped.Inc()
		}
	}
	return out
}

// repeatLocked returns the newest entry of obj when it is identical to the
// new event, else nil.
func (r *Ring) repeatLocked(obj Object, eventType, reason, message string) *Event {
	seq, ok := r.last[obj]
	if !ok {
		return nil
	}
	e := r.bySeqLocked(seq)
	if e == nil || e.Type != eventType || e.Reason != reason || e.Message != message {
		return nil
	}
	return e
}

// bySeqLocked finds an entry still in the ring. Seqs of entries are
// consecutive, so the position is computed.
func (r *Ring) bySeqLocked(seq uint64) *Event {
	if r.n == 0 {
		return nil
	}
	oldest := r.buf[r.start].Seq
	if seq < oldest || seq > r.seq {
		return nil
	}
	return &r.buf[(r.start+int(seq-oldest))%len(r.buf)]
}

func (r *Ring) appendLocked(e Event) *Event {
	r.seq++
	e.Seq = r.seq
	if r.n == len(r.buf) {
		old := &r.buf[r.start]
		if r.last[old.Object] == old.Seq {
			delete(r.last, old.Object)
		}
		r.start = (r.start + 1) % len(r.buf)
		r.n--
	}
	i := (r.start + r.n) % len(r.buf)
	r.buf[i] = e
	r.n++
	r.last[e.Object] = e.Seq
	return &r.buf[i]
}

// List returns the entries that match f, oldest first (by first
// occurrence).
func (r *Ring) List(f Filter) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for i := range r.n {
		e := &r.buf[(r.start+i)%len(r.buf)]
		if f.match(e) {
			out = append(out, *e)
		}
	}
	return out
}

// Len is the number of entries held.
func (r *Ring) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Watch streams every event recorded from now on, including repeats folded
// into an existing entry (same Seq, higher Count), until ctx is done; then
// the channel is closed. A watcher that falls more than the watch buffer
// behind loses events: the recorder never waits for it.
func (r *Ring) Watch(ctx context.Context) <-chan Event {
	w := &watcher{ch: make(chan Event, r.wbuf)}
	r.mu.Lock()
	r.watches[w] = struct{}{}
	r.mu.Unlock()
	context.AfterFunc(ctx, func() {
		r.mu.Lock()
		delete(r.watches, w)
		r.mu.Unlock()
		close(w.ch)
	})
	return w.ch
}
