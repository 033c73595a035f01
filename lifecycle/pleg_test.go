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
