package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// newTestPLEG returns a PLEG over rt with an empty cache and a fake clock.
func newTestPLEG(rt lifecycle.Runtime) (*lifecycle.PLEG, *lifecycle.Cache, *lifecycletest.FakeClock) {
	clock := lifecycletest.NewFakeClock(time.Unix(100, 0))
	cache := lifecycle.NewCache()
	return lifecycle.NewPLEG(rt, cache, clock, nil), cache, clock
}

// inspectFailing is a runtime whose PodStatus fails while err is set.
type inspectFailing struct {
	*lifecycletest.FakeRuntime
	err error
}

func (r *inspectFailing) PodStatus(ctx context.Context, uid types.UID, name, namespace string) (*lifecycle.PodStatus, error) {
	if r.err != nil {
		return nil, r.err
	}
	return r.FakeRuntime.PodStatus(ctx, uid, name, namespace)
}

// TestPLEGRecordsFailedInspection checks that a relist whose inspection
// of a changed pod fails records the error with the relist's time: a
// worker waiting for a status newer than its last sync gets the error
// (and retries with a FailedSync) instead of the record from before the
// change, served as fresh. The next successful inspection replaces it.
func TestPLEGRecordsFailedInspection(t *testing.T) {
	ctx := t.Context()
	rt := &inspectFailing{FakeRuntime: lifecycletest.NewFakeRuntime()}
	g, cache, clock := newTestPLEG(rt)
	rt.AddPod("1", "p", "ns", "c")
	if err := g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	lastSync := clock.Now()
	clock.Step(time.Second)

	rt.ExitContainer("1", "c", 1)
	rt.err = errors.New("inspection failed")
	if err := g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := cache.GetNewerThan(ctx, "1", lastSync)
	if !errors.Is(err, rt.err) {
		t.Fatalf("after a failed inspection GetNewerThan = %+v, %v; want the inspection error", st, err)
	}

	clock.Step(time.Second)
	rt.err = nil
	if err := g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	st, err = cache.GetNewerThan(ctx, "1", lastSync)
	if err != nil || st.Container("c") == nil || st.Container("c").State != lifecycle.ContainerExited {
		t.Errorf("after a successful retry GetNewerThan = %+v, %v; want the exited container", st, err)
	}
}

// TestPLEGInspect checks the inspection of the one pod an event or a sync
// names: only that pod's entry becomes newer (another pod waiting for a
// newer status is not served the old one), its container changes come out
// as events, and a failed inspection is recorded and retried by the next
// relist.
func TestPLEGInspect(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fail      bool
		wantEvent lifecycle.PodLifecycleEventType
	}{
		{"changed pod", false, lifecycle.ContainerDied},
		{"failed inspection", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			rt := &inspectFailing{FakeRuntime: lifecycletest.NewFakeRuntime()}
			g, cache, clock := newTestPLEG(rt)
			rt.AddPod("1", "p", "ns", "c")
			rt.AddPod("2", "q", "ns", "c")
			if err := g.Relist(ctx); err != nil {
				t.Fatal(err)
			}
			for len(g.Events()) > 0 {
				<-g.Events()
			}
			lastSync := clock.Now()
			clock.Step(time.Second)
			rt.ExitContainer("1", "c", 1)
			rt.ExitContainer("2", "c", 1)
			if tc.fail {
				rt.err = errors.New("inspection failed")
			}
			g.Request(lifecycle.PodRef{UID: "1", Name: "p", Namespace: "ns"})
			<-g.Requested()
			g.InspectRequested(ctx)

			st, err := cache.GetNewerThan(ctx, "1", lastSync)
			switch {
			case tc.fail && !errors.Is(err, rt.err):
				t.Errorf("after a failed inspection GetNewerThan = %+v, %v; want the inspection error", st, err)
			case !tc.fail && (err != nil || st.Container("c").State != lifecycle.ContainerExited):
				t.Errorf("after the inspection GetNewerThan = %+v, %v; want the exited container", st, err)
			}
			done, cancel := context.WithCancel(ctx)
			cancel()
			if st, err := cache.GetNewerThan(done, "2", lastSync); err == nil {
				t.Errorf("pod 2 passed for fresh after pod 1's inspection: %+v", st)
			}
			var got lifecycle.PodLifecycleEventType
			if len(g.Events()) > 0 {
				got = (<-g.Events()).Type
			}
			if got != tc.wantEvent || len(g.Events()) != 0 {
				t.Errorf("event %q (and %d more); want %q only", got, len(g.Events()), tc.wantEvent)
			}
			if !tc.fail {
				return
			}
			rt.err = nil
			clock.Step(time.Second)
			if err := g.Relist(ctx); err != nil {
				t.Fatal(err)
			}
			if st, err := cache.GetNewerThan(ctx, "1", lastSync); err != nil || st.Container("c").State != lifecycle.ContainerExited {
				t.Errorf("after the relist that retries it GetNewerThan = %+v, %v; want the exited container", st, err)
			}
		})
	}
}

// TestPLEGEventRequests drives event requests of one pod whose container
// runs (the PLEG inspected it once) and checks which of them make an
// inspection: those whose hint the PLEG's view already shows are
// skipped, those of a pod whose sync is in flight wait for the next
// serving, and a sync's own request is always served.
func TestPLEGEventRequests(t *testing.T) {
	ref := lifecycle.PodRef{UID: "1", Name: "p", Namespace: "ns"}
	for _, tc := range []struct {
		name        string
		hints       []lifecycle.Hint // "c" is replaced by the container's ID
		busy        bool
		forced      bool
		inspections int
	}{
		{name: "the start it saw", hints: []lifecycle.Hint{{ContainerID: "c", State: lifecycle.ContainerRunning}}},
		{name: "the creation it saw", hints: []lifecycle.Hint{{ContainerID: "c", State: lifecycle.ContainerCreated}}},
		{name: "an exit it did not see", hints: []lifecycle.Hint{{ContainerID: "c", State: lifecycle.ContainerExited}}, inspections: 1},
		{name: "a removal it did not see", hints: []lifecycle.Hint{{ContainerID: "c", Removed: true}}, inspections: 1},
		{name: "the removal of a container it never saw", hints: []lifecycle.Hint{{ContainerID: "other", Removed: true}}},
		{name: "a container it does not know", hints: []lifecycle.Hint{{ContainerID: "other", State: lifecycle.ContainerRunning}}, inspections: 1},
		{name: "an unknown state settles nothing", hints: []lifecycle.Hint{{ContainerID: "c", State: lifecycle.ContainerUnknown}}, inspections: 1},
		{name: "a sandbox event", hints: []lifecycle.Hint{{}}, inspections: 1},
		{name: "one unsettled hint among settled ones", hints: []lifecycle.Hint{
			{ContainerID: "c", State: lifecycle.ContainerRunning}, {ContainerID: "c", State: lifecycle.ContainerExited}}, inspections: 1},
		{name: "an unsettled hint while the pod syncs", hints: []lifecycle.Hint{{ContainerID: "c", State: lifecycle.ContainerExited}}, busy: true},
		{name: "a sync's end with a settled hint", hints: []lifecycle.Hint{{ContainerID: "c", State: lifecycle.ContainerRunning}}, forced: true, inspections: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &readCounting{FakeRuntime: lifecycletest.NewFakeRuntime()}
			rt.AddPod("1", "p", "ns", "c")
			pleg, _, _ := newTestPLEG(rt)
			busy := tc.busy
			pleg.Busy = func(uid types.UID) bool { return busy && uid == "1" }
			if err := pleg.Inspect(t.Context(), ref); err != nil {
				t.Fatal(err)
			}
			st, _ := rt.Get("1")
			id := st.Container("c").ID
			for _, h := range tc.hints {
				if h.ContainerID == "c" {
					h.ContainerID = id
				}
				pleg.RequestEvent(ref, h)
			}
			if tc.forced {
				pleg.Request(ref)
			}
			before := rt.statuses.Load()
			pleg.InspectRequested(t.Context())
			if got := int(rt.statuses.Load() - before); got != tc.inspections {
				t.Errorf("%d inspections; want %d", got, tc.inspections)
			}
			wantSkipped := 0
			if tc.inspections == 0 && !tc.busy {
				wantSkipped = 1
			}
			if got := pleg.Skipped(); got != wantSkipped {
				t.Errorf("%d requests counted as settled; want %d", got, wantSkipped)
			}
			if !tc.busy {
				return
			}
			// Held while the sync runs, served once it has ended.
			busy = false
			pleg.InspectRequested(t.Context())
			if got := rt.statuses.Load() - before; got != 1 {
				t.Errorf("after the sync ended: %d inspections; want the held hint's 1", got)
			}
		})
	}
}

// TestCacheForgetsPodsGoneFromTheRuntime checks that the cache holds no
// entry for a pod once a relist or an inspection showed the runtime holds
// nothing of it, so that it does not grow with every pod the node ever
// ran (issue 24: 0 pods in the runtime, 1000 entries), and that a worker
// waiting for a status newer than its last sync is served all along: an
// entry goes only once the cache's time vouches for the pod's absence.
func TestCacheForgetsPodsGoneFromTheRuntime(t *testing.T) {
	const n = 1000
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, rt *inspectFailing, g *lifecycle.PLEG, cache *lifecycle.Cache, clock *lifecycletest.FakeClock)
	}{
		{"relist: removed pods", func(t *testing.T, rt *inspectFailing, g *lifecycle.PLEG, cache *lifecycle.Cache, clock *lifecycletest.FakeClock) {
			for i := range n {
				rt.AddPod(types.UID(fmt.Sprint(i)), "p", "ns", "c")
			}
			relist(t, g, clock)
			for i := range n {
				rt.RemovePod(types.UID(fmt.Sprint(i)))
			}
			relist(t, g, clock)
		}},
		{"inspection: syncs of pods the runtime never held", func(t *testing.T, rt *inspectFailing, g *lifecycle.PLEG, cache *lifecycle.Cache, clock *lifecycletest.FakeClock) {
			relist(t, g, clock)
			for i := range n {
				clock.Step(time.Millisecond)
				g.Request(lifecycle.PodRef{UID: types.UID(fmt.Sprint(i)), Name: "p", Namespace: "ns"})
				g.InspectRequested(t.Context())
			}
			relist(t, g, clock)
		}},
		{"relist: a pod that had only a sandbox", func(t *testing.T, rt *inspectFailing, g *lifecycle.PLEG, cache *lifecycle.Cache, clock *lifecycletest.FakeClock) {
			rt.AddPod("1", "p", "ns") // a ready sandbox, no container
			g.Request(lifecycle.PodRef{UID: "1", Name: "p", Namespace: "ns"})
			g.InspectRequested(t.Context())
			relist(t, g, clock)
			rt.RemovePod("1")
			relist(t, g, clock)
		}},
		{"a failed inspection stays until one succeeds", func(t *testing.T, rt *inspectFailing, g *lifecycle.PLEG, cache *lifecycle.Cache, clock *lifecycletest.FakeClock) {
			rt.AddPod("1", "p", "ns", "c")
			relist(t, g, clock)
			rt.RemovePod("1")
			rt.err = errors.New("inspection failed")
			relist(t, g, clock)
			if _, err := cache.Get("1"); err == nil {
				t.Fatalf("the failed inspection's record is gone")
			}
			rt.err = nil
			relist(t, g, clock)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &inspectFailing{FakeRuntime: lifecycletest.NewFakeRuntime()}
			g, cache, clock := newTestPLEG(rt)
			tc.run(t, rt, g, cache, clock)
			if got := cache.LenForTest(); got != 0 {
				t.Errorf("the cache holds %d entries with no pod in the runtime; want 0", got)
			}
		})
	}
}

// relist steps the clock and relists once.
func relist(t *testing.T, g *lifecycle.PLEG, clock *lifecycletest.FakeClock) {
	t.Helper()
	clock.Step(time.Second)
	if err := g.Relist(t.Context()); err != nil {
		t.Fatal(err)
	}
	for len(g.Events()) > 0 {
		<-g.Events()
	}
}
