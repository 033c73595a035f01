package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeLister serves scripted listings to the watcher.
type fakeLister struct {
	mu    sync.Mutex
	state snapshot
	err   error
	calls chan struct{} // one per list call
	gate  chan snapshot // when set, each list call waits for its result here
}

func newFakeLister(words ...string) *fakeLister {
	return &fakeLister{state: snap(words...), calls: make(chan struct{}, 1000)}
}

func (f *fakeLister) list(ctx context.Context) (snapshot, error) {
	f.calls <- struct{}{}
	f.mu.Lock()
	gate, err := f.gate, f.err
	f.mu.Unlock()
	if gate != nil {
		select {
		case s := <-gate:
			return s, nil
		case <-ctx.Done():
			return snapshot{}, ctx.Err()
		}
	}
	if err != nil {
		return snapshot{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return snapshot{sandboxes: maps.Clone(f.state.sandboxes), containers: maps.Clone(f.state.containers)}, nil
}

func (f *fakeLister) watchInterval() time.Duration { return 100 * time.Millisecond }

func (f *fakeLister) set(words ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state = snap(words...)
}

// next waits for n more list calls to return and the watcher to settle.
func (f *fakeLister) next(n int) {
	for range n {
		<-f.calls
	}
	synctest.Wait()
}

// startWatcher subscribes to a watcher of l whose clock reads 42.
func startWatcher(t *testing.T, l lister) (*watcher, <-chan Event, func()) {
	t.Helper()
	w := newWatcher(l, testLogger())
	w.now = func() time.Time { return time.Unix(0, 42) }
	ch, unsubscribe, err := w.Subscribe(t.Context())
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	return w, ch, unsubscribe
}

// received drains what ch holds now.
func received(t *testing.T, ch <-chan Event) []string {
	t.Helper()
	var events []Event
	for {
		select {
		case ev := <-ch:
			events = append(events, ev)
		default:
			return render(t, events)
		}
	}
}

func TestWatcherReportsListedChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFakeLister("s1=ready", "c1@s1=running")
		_, ch, unsubscribe := startWatcher(t, l)
		defer unsubscribe()
		l.next(1) // the first listing is the baseline: no events
		l.next(1)
		if got := received(t, ch); got != nil {
			t.Errorf("steady state: got %q; want none", got)
		}
		l.set("s1=ready", "c1@s1=exited", "c2@s1=running")
		l.next(1)
		if got, want := received(t, ch), []string{"exited c1@s1", "created c2@s1", "started c2@s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("got %q; want %q", got, want)
		}
	})
}

func TestWatcherNotesThePluginsChangesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFakeLister("s1=ready")
		w, ch, unsubscribe := startWatcher(t, l)
		defer unsubscribe()
		l.next(1)
		w.note(change{kind: containerCreated, sandboxID: "s1", containerID: "c1", labels: map[string]string{"name": "c1"}})
		w.note(change{kind: containerStarted, containerID: "c1"})
		if got, want := received(t, ch), []string{"created c1@s1", "started c1@s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("at once: got %q; want %q", got, want)
		}
		l.set("s1=ready", "c1@s1=running")
		l.next(2)
		if got := received(t, ch); got != nil {
			t.Errorf("listings after the notes: got %q; want none", got)
		}
	})
}

func TestWatcherKeepsNotesAgainstAStaleListing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFakeLister("s1=ready")
		w, ch, unsubscribe := startWatcher(t, l)
		defer unsubscribe()
		l.next(1)
		gate := make(chan snapshot)
		l.mu.Lock()
		l.gate = gate
		l.mu.Unlock()
		<-l.calls // a listing begins…
		w.note(change{kind: containerCreated, sandboxID: "s1", containerID: "c1", labels: map[string]string{"name": "c1"}})
		gate <- snap("s1=ready") // …and ends without c1
		synctest.Wait()
		if got, want := received(t, ch), []string{"created c1@s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("got %q; want %q, and no removal", got, want)
		}
		<-l.calls
		gate <- snap("s1=ready", "c1@s1=created")
		synctest.Wait()
		if got := received(t, ch); got != nil {
			t.Errorf("the next listing: got %q; want none", got)
		}
	})
}

func TestWatcherRunsOnlyWhileSubscribed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFakeLister("s1=ready")
		w, _, unsubscribe := startWatcher(t, l)
		_, unsubscribe2, err := w.Subscribe(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		l.next(2)
		unsubscribe()
		l.next(1) // one subscriber is left
		unsubscribe2()
		unsubscribe2() // twice is harmless
		synctest.Wait()
		<-time.After(time.Second) // fake time: ten intervals pass
		if n := len(l.calls); n != 0 {
			t.Errorf("after the last unsubscribe: %d listings; want none", n)
		}
		w.note(change{kind: sandboxStopped, sandboxID: "s1"}) // nobody listens: no effect
	})
}

func TestWatcherFailsSubscribeWithoutAFirstListing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFakeLister()
		l.err = fmt.Errorf("%w: connection refused", errUnavailable)
		w := newWatcher(l, testLogger())
		if _, _, err := w.Subscribe(t.Context()); !errors.Is(err, errUnavailable) {
			t.Fatalf("Subscribe with containerd down: got %v; want errUnavailable", err)
		}
		l.mu.Lock()
		l.err = nil
		l.mu.Unlock()
		_, unsubscribe, err := w.Subscribe(t.Context())
		if err != nil {
			t.Fatalf("Subscribe once containerd is back: %v", err)
		}
		unsubscribe()
	})
}

func TestWatcherSurvivesFailingListings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFakeLister("s1=ready")
		_, ch, unsubscribe := startWatcher(t, l)
		defer unsubscribe()
		l.next(1)
		l.mu.Lock()
		l.err = errors.New("containerd restarting")
		l.mu.Unlock()
		l.next(3)
		l.mu.Lock()
		l.err = nil
		l.mu.Unlock()
		l.set("s1=notready")
		l.next(1)
		if got, want := received(t, ch), []string{"sandbox-notready s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("got %q; want %q", got, want)
		}
	})
}
