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

// fakeSource is containerd as a script: what CRI shows, and one stream of
// containerd events per subscription.
type fakeSource struct {
	mu       sync.Mutex
	state    snapshot // what CRI lists and looks up
	next     snapshot // when set, what CRI shows after lag more look-ups
	lag      int
	listErr  error
	subErr   error
	lookups  int
	onLookup func()           // when set, runs during each look-up, after CRI answered
	onList   func()           // when set, runs during each listing, after CRI answered
	streams  chan *fakeStream // one per subscription
	listings chan struct{}    // one per list call
}

func newFakeSource(words ...string) *fakeSource {
	return &fakeSource{state: snap(words...), streams: make(chan *fakeStream, 10), listings: make(chan struct{}, 100)}
}

func (f *fakeSource) list(context.Context) (snapshot, error) {
	f.listings <- struct{}{}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listErr != nil {
		return snapshot{}, f.listErr
	}
	listed := snapshot{sandboxes: maps.Clone(f.state.sandboxes), containers: maps.Clone(f.state.containers)}
	if hook := f.onList; hook != nil {
		f.mu.Unlock()
		hook()
		f.mu.Lock()
	}
	return listed, nil
}

func (f *fakeSource) lookup(_ context.Context, id string) (object, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	if f.next.sandboxes != nil {
		if f.lag == 0 {
			f.state, f.next = f.next, snapshot{}
		} else {
			f.lag--
		}
	}
	var obj object
	if c, ok := f.state.containers[id]; ok {
		obj = object{kind: objectContainer, container: c}
	} else if sb, ok := f.state.sandboxes[id]; ok {
		obj = object{kind: objectSandbox, sandbox: sb}
	}
	if hook := f.onLookup; hook != nil {
		f.mu.Unlock()
		hook()
		f.mu.Lock()
	}
	return obj, nil
}

func (f *fakeSource) subscribe(ctx context.Context) (taskEvents, error) {
	f.mu.Lock()
	err := f.subErr
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	s := &fakeStream{ctx: ctx, events: make(chan taskEvent, 10), broken: make(chan error, 1)}
	f.streams <- s
	return s, nil
}

// set makes CRI show words, at once or after lag more look-ups.
func (f *fakeSource) set(lag int, words ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if lag == 0 {
		f.state = snap(words...)
		return
	}
	f.next, f.lag = snap(words...), lag-1
}

type fakeStream struct {
	ctx    context.Context
	events chan taskEvent
	broken chan error
}

func (s *fakeStream) next() (taskEvent, error) {
	select {
	case ev := <-s.events:
		return ev, nil
	case err := <-s.broken:
		return taskEvent{}, err
	case <-s.ctx.Done():
		return taskEvent{}, s.ctx.Err()
	}
}

// startWatcher subscribes to a watcher of src whose clock reads 42 and
// returns it with the containerd stream it follows.
func startWatcher(t *testing.T, src *fakeSource) (*watcher, <-chan Event, *fakeStream) {
	t.Helper()
	w := newWatcher(src, testLogger())
	w.now = func() time.Time { return time.Unix(0, 42) }
	ch, unsubscribe, err := w.Subscribe(t.Context())
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	t.Cleanup(unsubscribe)
	return w, ch, <-src.streams
}

// received drains what ch holds once the watcher has settled.
func received(t *testing.T, ch <-chan Event) []string {
	t.Helper()
	synctest.Wait()
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

func ctrExit(id string) taskEvent    { return taskEvent{topic: topicExited, id: id} }
func ctrStart(id string) taskEvent   { return taskEvent{topic: topicStarted, id: id} }
func ctrRemoved(id string) taskEvent { return taskEvent{topic: topicRemoved, id: id} }

func TestWatcherFollowsContainerdEvents(t *testing.T) {
	tests := []struct {
		name   string
		before []string    // what CRI shows at the start
		after  []string    // what CRI shows once it has caught up
		lag    int         // look-ups before CRI has caught up
		events []taskEvent // what containerd tells
		want   []string
	}{
		{"a container exits", []string{"s1=ready", "c1@s1=running"}, []string{"s1=ready", "c1@s1=exited"}, 0, []taskEvent{ctrExit("c1")}, []string{"exited c1@s1"}},
		{"exit and delete tell of one exit", []string{"s1=ready", "c1@s1=running"}, []string{"s1=ready", "c1@s1=exited"}, 0, []taskEvent{ctrExit("c1"), ctrExit("c1")}, []string{"exited c1@s1"}},
		{"CRI catches up later", []string{"s1=ready", "c1@s1=running"}, []string{"s1=ready", "c1@s1=exited"}, 3, []taskEvent{ctrExit("c1")}, []string{"exited c1@s1"}},
		{"a container made by another client starts", []string{"s1=ready"}, []string{"s1=ready", "c1@s1=running"}, 0, []taskEvent{ctrStart("c1")}, []string{"created c1@s1", "started c1@s1"}},
		{"a start already seen", []string{"s1=ready", "c1@s1=running"}, []string{"s1=ready", "c1@s1=running"}, 0, []taskEvent{ctrStart("c1")}, nil},
		{"an ID CRI does not know", []string{"s1=ready"}, []string{"s1=ready"}, 0, []taskEvent{ctrStart("x"), ctrExit("x"), ctrRemoved("x")}, nil},
		{"a running container goes", []string{"s1=ready", "c1@s1=running"}, []string{"s1=ready"}, 0, []taskEvent{ctrRemoved("c1")}, []string{"exited c1@s1", "removed c1@s1"}},
		{"removal waits for CRI", []string{"s1=ready", "c1@s1=exited"}, []string{"s1=ready"}, 2, []taskEvent{ctrRemoved("c1")}, []string{"removed c1@s1"}},
		{"a sandbox's task exits", []string{"s1=ready"}, []string{"s1=notready"}, 1, []taskEvent{ctrExit("s1")}, []string{"sandbox-notready s1"}},
		{"a sandbox made by another client starts", nil, []string{"s1=ready"}, 0, []taskEvent{ctrStart("s1")}, []string{"sandbox-ready s1"}},
		{"a sandbox goes with its containers", []string{"s1=notready", "c1@s1=exited"}, nil, 0, []taskEvent{ctrRemoved("s1")}, []string{"removed c1@s1", "sandbox-removed s1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newFakeSource(tt.before...)
				_, ch, stream := startWatcher(t, src)
				if got := received(t, ch); got != nil {
					t.Fatalf("baseline: got %q; want none", got)
				}
				src.set(tt.lag, tt.after...)
				for _, ev := range tt.events {
					stream.events <- ev
				}
				time.Sleep(time.Second) // fake time: the look-ups' back-off passes
				if got := received(t, ch); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got %q; want %q", got, tt.want)
				}
			})
		})
	}
}

func TestWatcherGivesUpOnAnObjectCRINeverUpdates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFakeSource("s1=ready", "c1@s1=running", "c2@s1=running")
		_, ch, stream := startWatcher(t, src)
		src.set(0, "s1=ready", "c1@s1=running", "c2@s1=exited")
		stream.events <- ctrExit("c1") // CRI never shows it
		stream.events <- ctrExit("c2") // is not held up by c1
		if got, want := received(t, ch), []string{"exited c2@s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("at once: got %q; want %q", got, want)
		}
		time.Sleep(confirmTimeout + time.Second)
		synctest.Wait()
		src.mu.Lock()
		before := src.lookups
		src.mu.Unlock()
		time.Sleep(time.Minute)
		src.mu.Lock()
		after := src.lookups
		src.mu.Unlock()
		if got := received(t, ch); got != nil || after != before {
			t.Errorf("after the timeout: got %q and %d more look-ups; want none and none", got, after-before)
		}
	})
}

func TestWatcherLeavesThePluginsOwnCallsToTheirNotes(t *testing.T) {
	tests := []struct {
		name  string
		id    string // the call's: "" for a creation
		event taskEvent
		note  change
		want  []string
	}{
		{"a sandbox the plugin runs", "", ctrStart("s2"), change{kind: sandboxReadied, sandboxID: "s2", sandbox: sbItem("s2", 1)}, []string{"sandbox-ready s2"}},
		{"a container the plugin makes", "", taskEvent{topic: topicCreated, id: "c2"}, change{kind: containerCreated, sandboxID: "s1", containerID: "c2", container: ctrItem("c2", "s1", 1)}, []string{"created c2@s1"}},
		{"a container the plugin starts", "c1", ctrStart("c1"), change{kind: containerStarted, containerID: "c1"}, []string{"started c1@s1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newFakeSource("s1=ready", "c1@s1=created")
				w, ch, stream := startWatcher(t, src)
				done := w.begin(tt.id)
				stream.events <- tt.event // containerd tells before CRI answers the call
				time.Sleep(time.Second)
				w.note(tt.note)
				done()
				if got := received(t, ch); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got %q; want %q", got, tt.want)
				}
				src.mu.Lock()
				defer src.mu.Unlock()
				if src.lookups != 0 {
					t.Errorf("%d look-ups; want none", src.lookups)
				}
			})
		})
	}
}

func TestWatcherReportsEachChangeOnce(t *testing.T) {
	// The plugin's own call and containerd's event tell of one change, in
	// either order.
	tests := []struct {
		name       string
		eventFirst bool
	}{
		{"the note first", false},
		{"the event first", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newFakeSource("s1=ready", "c1@s1=running")
				w, ch, stream := startWatcher(t, src)
				src.set(0, "s1=ready", "c1@s1=exited")
				note := func() { w.note(change{kind: containerExited, containerID: "c1"}) }
				if !tt.eventFirst {
					note()
				}
				stream.events <- ctrExit("c1")
				synctest.Wait()
				if tt.eventFirst {
					note()
				}
				if got, want := received(t, ch), []string{"exited c1@s1"}; !reflect.DeepEqual(got, want) {
					t.Errorf("got %q; want %q", got, want)
				}
			})
		})
	}
}

func TestWatcherDropsALookupThatTheObjectsRemovalOvertook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFakeSource("s1=ready", "c1@s1=running")
		w, ch, stream := startWatcher(t, src)
		src.set(0, "s1=ready", "c1@s1=exited")
		hook := sync.OnceFunc(func() {
			// CRI answered "exited"; before that answer is used, the
			// plugin stops and removes the container.
			w.note(change{kind: containerExited, containerID: "c1"})
			w.note(change{kind: containerRemoved, containerID: "c1"})
			src.set(0, "s1=ready")
		})
		src.mu.Lock()
		src.onLookup = hook
		src.mu.Unlock()
		stream.events <- ctrExit("c1")
		time.Sleep(time.Second)
		if got, want := received(t, ch), []string{"exited c1@s1", "removed c1@s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("got %q; want %q", got, want)
		}
	})
}

func TestWatcherResyncsAfterTheSubscriptionBreaks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFakeSource("s1=ready", "c1@s1=running", "c2@s1=running")
		_, ch, stream := startWatcher(t, src)
		<-src.listings
		src.mu.Lock()
		src.subErr = fmt.Errorf("%w: connection refused", errUnavailable)
		src.mu.Unlock()
		stream.broken <- errors.New("containerd went away")
		// While containerd is away c1 exits, unseen.
		src.set(0, "s1=ready", "c1@s1=exited", "c2@s1=running")
		<-time.After(time.Second) // fake time: a few failed subscriptions
		if got := received(t, ch); got != nil {
			t.Errorf("while away: got %q; want none", got)
		}
		src.mu.Lock()
		src.subErr = nil
		src.mu.Unlock()
		stream = <-src.streams
		<-src.listings
		if got, want := received(t, ch), []string{"exited c1@s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("resync: got %q; want %q", got, want)
		}
		// containerd tells of c1's exit late, then c2 exits.
		src.set(0, "s1=ready", "c1@s1=exited", "c2@s1=exited")
		stream.events <- ctrExit("c1")
		stream.events <- ctrExit("c2")
		if got, want := received(t, ch), []string{"exited c2@s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("after the resync: got %q; want %q", got, want)
		}
	})
}

func TestWatcherKeepsWhatItObservedAgainstAStaleResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFakeSource("s1=ready", "c1@s1=running")
		_, ch, stream := startWatcher(t, src)
		<-src.listings
		// CRI shows c1's exit only at the seventh look-up, about 230 ms on.
		src.set(7, "s1=ready", "c1@s1=exited")
		stream.events <- ctrExit("c1")
		stream.broken <- errors.New("containerd went away")
		// The resync's listing answers before the exit shows and is used
		// only after the look-up has reported it.
		src.mu.Lock()
		src.onList = sync.OnceFunc(func() { time.Sleep(time.Second) })
		src.mu.Unlock()
		stream = <-src.streams
		<-src.listings
		synctest.Wait()
		stream.events <- ctrExit("c1") // the task's delete
		time.Sleep(time.Second)
		if got, want := received(t, ch), []string{"exited c1@s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("got %q; want %q", got, want)
		}
	})
}

func TestWatcherRunsOnlyWhileSubscribed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFakeSource("s1=ready")
		w := newWatcher(src, testLogger())
		_, unsubscribe, err := w.Subscribe(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		_, unsubscribe2, err := w.Subscribe(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		stream := <-src.streams
		unsubscribe()
		synctest.Wait()
		if stream.ctx.Err() != nil {
			t.Fatal("the subscription ended with a subscriber left")
		}
		unsubscribe2()
		unsubscribe2() // twice is harmless
		synctest.Wait()
		if stream.ctx.Err() == nil {
			t.Error("the subscription outlived the last subscriber")
		}
		w.note(change{kind: sandboxStopped, sandboxID: "s1"}) // nobody listens: no effect
		if n := len(src.listings) + len(src.streams); n != 1 {
			t.Errorf("%d listings and subscriptions after the first; want none", n-1)
		}
	})
}

func TestWatcherFailsSubscribeWithoutContainerd(t *testing.T) {
	tests := []struct {
		name            string
		subErr, listErr error
	}{
		{"no event service", fmt.Errorf("%w: connection refused", errUnavailable), nil},
		{"no listing", nil, fmt.Errorf("%w: connection refused", errUnavailable)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newFakeSource()
				src.subErr, src.listErr = tt.subErr, tt.listErr
				w := newWatcher(src, testLogger())
				if _, _, err := w.Subscribe(t.Context()); !errors.Is(err, errUnavailable) {
					t.Fatalf("Subscribe with containerd down: got %v; want errUnavailable", err)
				}
				src.mu.Lock()
				src.subErr, src.listErr = nil, nil
				src.mu.Unlock()
				_, unsubscribe, err := w.Subscribe(t.Context())
				if err != nil {
					t.Fatalf("Subscribe once containerd is back: %v", err)
				}
				unsubscribe()
			})
		})
	}
}

func TestWatcherRecordsChangesOnlyDuringAListing(t *testing.T) {
	// The record keep needs would grow with every change made while the
	// subscription lasts, which is the plugin's life.
	synctest.Test(t, func(t *testing.T) {
		src := newFakeSource("s1=ready")
		w, _, _ := startWatcher(t, src)
		for i := range 100 {
			id := fmt.Sprintf("c%d", i)
			w.note(change{kind: containerCreated, sandboxID: "s1", containerID: id, container: ctrItem(id, "s1", 1)})
			w.note(change{kind: containerRemoved, containerID: id})
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if n := len(w.run.touched); n != 0 {
			t.Errorf("%d objects recorded between listings; want none", n)
		}
	})
}
