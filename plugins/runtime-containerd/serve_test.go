package main

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestSnapshotServesFilteredListings(t *testing.T) {
	s := snap("s1=ready", "s2=notready", "s3=ready", "c1@s1=running", "c2@s1=exited", "c3@s3=created", "c10@s1=running")
	// c1's label as a host sets it; a selector may name the plugin's too.
	c1 := s.containers["c1"]
	c1.labels = map[string]string{"name": "c1", labelSandboxID: "s1", "app": "web"}
	s.containers["c1"] = c1
	sandboxes := func(f SandboxFilter) func() []string {
		return func() (ids []string) {
			for _, sb := range s.sandboxList(f) {
				ids = append(ids, sb.ID)
			}
			return ids
		}
	}
	containers := func(f ContainerFilter) func() []string {
		return func() (ids []string) {
			for _, c := range s.containerList(f) {
				ids = append(ids, c.ID)
			}
			return ids
		}
	}
	tests := []struct {
		name string
		list func() []string
		want []string
	}{
		{"sandboxes: all", sandboxes(SandboxFilter{}), []string{"s1", "s2", "s3"}},
		{"sandboxes: ID exact", sandboxes(SandboxFilter{ID: "s1"}), []string{"s1"}},
		{"sandboxes: an ID prefix selects none", sandboxes(SandboxFilter{ID: "s"}), nil},
		{"sandboxes: ready", sandboxes(SandboxFilter{State: SandboxReady}), []string{"s1", "s3"}},
		{"sandboxes: not ready", sandboxes(SandboxFilter{State: SandboxNotReady}), []string{"s2"}},
		{"sandboxes: an unknown state selects all, as CRI", sandboxes(SandboxFilter{State: 9}), []string{"s1", "s2", "s3"}},
		{"sandboxes: label", sandboxes(SandboxFilter{Labels: map[string]string{"name": "s3"}}), []string{"s3"}},
		{"sandboxes: labels all match", sandboxes(SandboxFilter{Labels: map[string]string{"name": "s3", "other": "x"}}), nil},
		{"sandboxes: state and ID", sandboxes(SandboxFilter{ID: "s2", State: SandboxReady}), nil},
		{"containers: all, oldest first", containers(ContainerFilter{}), []string{"c1", "c2", "c3", "c10"}},
		{"containers: ID exact", containers(ContainerFilter{ID: "c1"}), []string{"c1"}},
		{"containers: sandbox", containers(ContainerFilter{SandboxID: "s1"}), []string{"c1", "c2", "c10"}},
		{"containers: a sandbox ID prefix selects none", containers(ContainerFilter{SandboxID: "s"}), nil},
		{"containers: running", containers(ContainerFilter{State: ContainerRunning}), []string{"c1", "c10"}},
		{"containers: exited in s1", containers(ContainerFilter{SandboxID: "s1", State: ContainerExited}), []string{"c2"}},
		{"containers: an unknown state selects all, as CRI", containers(ContainerFilter{State: 9}), []string{"c1", "c2", "c3", "c10"}},
		{"containers: host label", containers(ContainerFilter{Labels: map[string]string{"app": "web"}}), []string{"c1"}},
		{"containers: the plugin's label", containers(ContainerFilter{Labels: map[string]string{labelSandboxID: "s3"}}), []string{"c3"}},
		{"containers: ID and another sandbox", containers(ContainerFilter{ID: "c1", SandboxID: "s3"}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.list(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}

func TestSnapshotServesWhatCRIListsWithItsOwnState(t *testing.T) {
	s := snap("s1=ready", "c1@s1=created")
	s.apply(change{kind: containerStarted, containerID: "c1"}, 42)
	s.apply(change{kind: sandboxStopped, sandboxID: "s1"}, 42)
	wantSandbox := sandboxFromCRI(sbItem("s1", 1))
	wantSandbox.State = SandboxNotReady
	if got := s.sandboxList(SandboxFilter{}); !reflect.DeepEqual(got, []Sandbox{wantSandbox}) {
		t.Errorf("sandboxes: got %+v; want %+v", got, []Sandbox{wantSandbox})
	}
	wantContainer := containerFromCRI(ctrItem("c1", "s1", 2))
	wantContainer.State = ContainerExited // started, then killed by the sandbox's stop
	if got := s.containerList(ContainerFilter{}); !reflect.DeepEqual(got, []Container{wantContainer}) {
		t.Errorf("containers: got %+v; want %+v", got, []Container{wantContainer})
	}
}

// served reports whether w answers a listing from its snapshot, and with
// which sandboxes and containers.
func served(w *watcher) (bool, []string) {
	sbs, ok := w.sandboxes(SandboxFilter{})
	ctrs, ok2 := w.containers(ContainerFilter{})
	if ok != ok2 {
		panic("sandboxes and containers disagree on whether the snapshot is current")
	}
	var ids []string
	for _, sb := range sbs {
		ids = append(ids, sb.ID+"="+fmt.Sprint(sb.State))
	}
	for _, c := range ctrs {
		ids = append(ids, c.ID+"="+fmt.Sprint(c.State))
	}
	return ok, ids
}

func TestWatcherServesOnlyWhileCurrent(t *testing.T) {
	type step struct {
		name  string
		do    func(w *watcher, src *fakeSource, stream **fakeStream)
		serve bool
	}
	breakSub := func(w *watcher, src *fakeSource, stream **fakeStream) {
		src.mu.Lock()
		src.subErr = fmt.Errorf("%w: connection refused", errUnavailable)
		src.mu.Unlock()
		(*stream).broken <- errors.New("containerd went away")
		time.Sleep(time.Second) // fake time: a few failed subscriptions
	}
	resubscribe := func(w *watcher, src *fakeSource, stream **fakeStream) {
		src.mu.Lock()
		src.subErr = nil
		src.mu.Unlock()
		*stream = <-src.streams
	}
	// busy makes CRI's listings fail (so that the resync a step asks for
	// fails too) and then takes the step; resynced lets the next periodic
	// resync succeed.
	busy := func(name string, do func(w *watcher)) step {
		return step{name, func(w *watcher, src *fakeSource, _ **fakeStream) {
			src.mu.Lock()
			src.listErr = errors.New("containerd is busy")
			src.mu.Unlock()
			do(w)
		}, false}
	}
	resynced := step{"resynced", func(w *watcher, src *fakeSource, _ **fakeStream) {
		src.mu.Lock()
		src.listErr = nil
		src.mu.Unlock()
		time.Sleep(resyncPeriod)
	}, true}
	tests := []struct {
		name  string
		steps []step
	}{
		{"subscribed", nil},
		{"a broken subscription, then made again", []step{
			{"broken", breakSub, false},
			{"made again", resubscribe, true},
		}},
		{"a failed call, then the resync it asks for", []step{
			busy("failed", func(w *watcher) { w.invalidate() }),
			resynced,
		}},
		{"a change the snapshot cannot record", []step{
			busy("a start of a container it does not know", func(w *watcher) { w.note(change{kind: containerStarted, containerID: "c9"}) }),
			resynced,
		}},
		{"CRI does not know an object", []step{
			{"one the snapshot does not know either", func(w *watcher, _ *fakeSource, _ **fakeStream) { w.notFound("c9") }, true},
			busy("one the snapshot has", func(w *watcher) { w.notFound("c1") }),
			resynced,
		}},
		{"a new backend", []step{
			{"swapped", func(w *watcher, src *fakeSource, _ **fakeStream) {
				src.mu.Lock()
				src.subErr = fmt.Errorf("%w: connection refused", errUnavailable)
				src.mu.Unlock()
				w.swap(func() {})
				time.Sleep(time.Second)
			}, false},
			{"subscribed to it", resubscribe, true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newFakeSource("s1=ready", "c1@s1=running")
				w := newWatcher(src, testLogger())
				if ok, _ := served(w); ok {
					t.Fatal("served with nobody subscribed")
				}
				_, unsubscribe, err := w.Subscribe(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(unsubscribe)
				stream := <-src.streams
				want := []string{"s1=1", "c1=2"}
				if ok, got := served(w); !ok || !reflect.DeepEqual(got, want) {
					t.Fatalf("subscribed: served %v %q; want true %q", ok, got, want)
				}
				for _, st := range tt.steps {
					st.do(w, src, &stream)
					synctest.Wait()
					if ok, _ := served(w); ok != st.serve {
						t.Fatalf("%s: served %v; want %v", st.name, ok, st.serve)
					}
				}
				unsubscribe()
				if ok, _ := served(w); ok {
					t.Error("served after the last subscriber left")
				}
			})
		})
	}
}

func TestWatcherResyncFindsAMissedChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFakeSource("s1=ready", "c1@s1=running")
		w, ch, _ := startWatcher(t, src)
		src.set(0, "s1=ready", "c1@s1=exited") // containerd's event is lost
		time.Sleep(resyncPeriod - time.Second)
		if _, got := served(w); !reflect.DeepEqual(got, []string{"s1=1", "c1=2"}) {
			t.Fatalf("before the resync: served %q", got)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if _, got := served(w); !reflect.DeepEqual(got, []string{"s1=1", "c1=3"}) {
			t.Errorf("after the resync: served %q; want c1 exited", got)
		}
		if got, want := received(t, ch), []string{"exited c1@s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("events: got %q; want %q", got, want)
		}
	})
}

func TestWatcherKeepsThePluginsChangesDuringTheBaseline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFakeSource("s1=ready")
		w := newWatcher(src, testLogger())
		w.now = func() time.Time { return time.Unix(0, 42) }
		// The plugin makes c1 while the baseline listing, which misses
		// it, is under way.
		src.onList = func() {
			w.note(change{kind: containerCreated, sandboxID: "s1", containerID: "c1", container: ctrItem("c1", "s1", 5)})
		}
		ch, unsubscribe, err := w.Subscribe(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer unsubscribe()
		if ok, got := served(w); !ok || !reflect.DeepEqual(got, []string{"s1=1", "c1=1"}) {
			t.Errorf("served %v %q; want s1 and c1", ok, got)
		}
		if got, want := received(t, ch), []string{"created c1@s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("events: got %q; want %q", got, want)
		}
	})
}

func TestWatcherGivesUpASubscriptionMadeBeforeANewBackend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFakeSource("s1=ready")
		w, _, stream := startWatcher(t, src)
		<-src.listings
		// The backend changes while the subscription that follows a break
		// is being made, before its listing is used.
		src.mu.Lock()
		src.onList = sync.OnceFunc(func() { w.swap(func() {}) })
		src.mu.Unlock()
		stream.broken <- errors.New("containerd went away")
		first := <-src.streams
		synctest.Wait()
		if first.ctx.Err() == nil {
			t.Error("the subscription begun before the new backend is still used")
		}
		if ok, _ := served(w); ok {
			t.Error("served from a listing begun before the new backend")
		}
		<-src.streams // made again, on the new backend
		synctest.Wait()
		if ok, _ := served(w); !ok {
			t.Error("not served once subscribed to the new backend")
		}
	})
}
