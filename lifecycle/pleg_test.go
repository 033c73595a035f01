package lifecycle_test

import (
	"context"
	"errors"
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
