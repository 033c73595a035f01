package lifecycle_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// driverEnv is a full driver on the system clock, for use inside a
// synctest bubble where time is virtual.
type driverEnv struct {
	core     *lifecycle.PodWorkers
	workers  *lifecycle.Workers
	syncer   *lifecycletest.FakeSyncer
	cache    *lifecycle.Cache
	recorder *lifecycletest.FakeRecorder
	cancel   context.CancelFunc
	done     chan struct{}
}

// startDriver starts the workers; with relist, the cache time advances
// every second as a PLEG would advance it.
func startDriver(t *testing.T, syncer *lifecycletest.FakeSyncer, relist ...bool) *driverEnv {
	t.Helper()
	e := &driverEnv{syncer: syncer, cache: lifecycle.NewCache(), recorder: &lifecycletest.FakeRecorder{}, done: make(chan struct{})}
	e.core = lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{Clock: lifecycle.SystemClock{}, Cache: e.cache})
	e.workers = lifecycle.NewWorkers(e.core, syncer, e.cache, e.recorder)
	e.cache.UpdateTime(time.Now())
	var ctx context.Context
	ctx, e.cancel = context.WithCancel(context.Background())
	relisted := make(chan struct{})
	go func() {
		defer close(relisted)
		for len(relist) > 0 && relist[0] {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
				e.cache.UpdateTime(time.Now())
			}
		}
	}()
	go func() {
		defer close(e.done)
		e.workers.Run(ctx)
		<-relisted
	}()
	t.Cleanup(e.stop)
	return e
}

func (e *driverEnv) stop() {
	e.cancel()
	<-e.done
}

func podWithGrace(uid, name string, grace int64) *v1.Pod {
	p := &v1.Pod{}
	p.UID, p.Name, p.Namespace = types.UID(uid), name, "ns"
	p.Spec.TerminationGracePeriodSeconds = &grace
	return p
}

func TestKillPodNow(t *testing.T) {
	t.Run("A19 override 0 gives grace 1 and returns once terminated", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := startDriver(t, &lifecycletest.FakeSyncer{}, true)
			pod := podWithGrace("1", "p", 30)
			e.workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: pod})
			synctest.Wait()
			zero := int64(0)
			err := lifecycle.PodKiller{Workers: e.workers, Clock: lifecycle.SystemClock{}, Recorder: e.recorder}.KillPodNow(context.Background(), pod, &zero, nil)
			if err != nil {
				t.Fatalf("KillPodNow: %v", err)
			}
			advance(2 * time.Second)
			synctest.Wait()
			want := []string{"SyncPod p create", "SyncTerminatingPod p grace=1", "SyncTerminatedPod p"}
			if got := e.syncer.Calls(); !slices.Equal(got, want) {
				t.Errorf("calls %q; want %q", got, want)
			}
		})
	})
	t.Run("A19 termination that does not finish in time gives ExceededGracePeriod", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			syncer := &lifecycletest.FakeSyncer{SyncTerminatingFunc: func(ctx context.Context, _ *v1.Pod, _ *int64) error {
				<-ctx.Done()
				return ctx.Err()
			}}
			e := startDriver(t, syncer)
			pod := podWithGrace("1", "p", 4)
			start := time.Now()
			err := lifecycle.PodKiller{Workers: e.workers, Clock: lifecycle.SystemClock{}, Recorder: e.recorder}.KillPodNow(context.Background(), pod, nil, nil)
			if !errors.Is(err, lifecycle.ErrGracePeriodExceeded) {
				t.Fatalf("err %v; want ErrGracePeriodExceeded", err)
			}
			if d := time.Since(start); d != 10*time.Second {
				t.Errorf("waited %s; want max(1.5*4s, 10s) = 10s", d)
			}
			if ev := e.recorder.Events(); len(ev) != 1 || !strings.Contains(ev[0], "ExceededGracePeriod") {
				t.Errorf("events %q; want one ExceededGracePeriod", ev)
			}
		})
	})
}

func TestStatusFreshness(t *testing.T) {
	t.Run("A22 a worker waits for a status newer than its previous sync", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			seen := make(chan string, 10)
			syncer := &lifecycletest.FakeSyncer{SyncPodFunc: func(_ context.Context, _ *v1.Pod, s *lifecycle.PodStatus) (bool, error) {
				seen <- s.Name
				return false, nil
			}}
			e := startDriver(t, syncer)
			pod := podWithGrace("1", "p", 30)
			advance(time.Second)
			e.cache.Set("1", &lifecycle.PodStatus{ID: "1", Name: "old"}, nil, time.Now())
			e.workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: pod})
			synctest.Wait()
			if got := <-seen; got != "old" {
				t.Fatalf("first sync saw %q", got)
			}
			e.workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateSync, Pod: pod})
			synctest.Wait()
			if len(seen) != 0 {
				t.Fatalf("second sync ran on a status older than the first sync's end")
			}
			advance(time.Second)
			e.cache.Set("1", &lifecycle.PodStatus{ID: "1", Name: "new"}, nil, time.Now())
			synctest.Wait()
			if got := <-seen; got != "new" {
				t.Errorf("second sync saw %q; want new", got)
			}
		})
	})
	t.Run("A22 a failed cache read is a FailedSync with back-off", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := startDriver(t, &lifecycletest.FakeSyncer{})
			advance(time.Second)
			e.cache.Set("1", nil, errors.New("inspect failed"), time.Now())
			e.workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: podWithGrace("1", "p", 30)})
			synctest.Wait()
			if ev := e.recorder.Events(); len(ev) != 1 || !strings.Contains(ev[0], "FailedSync") {
				t.Errorf("events %q; want one FailedSync", ev)
			}
			if len(e.syncer.Calls()) != 0 {
				t.Errorf("syncer called despite the failed status read: %q", e.syncer.Calls())
			}
			due, ok := e.core.Queue().Due("1")
			if !ok || time.Until(due) != lifecycle.DefaultBackOffPeriod {
				t.Errorf("due in %s; want %s", time.Until(due), lifecycle.DefaultBackOffPeriod)
			}
		})
	})
}

func TestKillWhileStartingDriver(t *testing.T) {
	// A16 on the real driver: SyncPod blocked in a cancellable wait is
	// cancelled by whatever requests termination and no container is
	// started afterwards.
	kill := func(e *driverEnv, pod *v1.Pod) {
		e.workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateKill, Pod: pod})
	}
	orphan := func(e *driverEnv, _ *v1.Pod) { e.workers.SyncKnownPods(nil) }
	for _, tc := range []struct {
		name      string
		terminate []func(*driverEnv, *v1.Pod)
	}{
		{"kill", []func(*driverEnv, *v1.Pod){kill}},
		{"housekeeping finds it orphaned", []func(*driverEnv, *v1.Pod){orphan}},
		{"orphaned, then killed", []func(*driverEnv, *v1.Pod){orphan, kill}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := lifecycletest.NewFakeRuntime()
				syncer := &lifecycletest.FakeSyncer{
					SyncPodFunc: func(ctx context.Context, pod *v1.Pod, s *lifecycle.PodStatus) (bool, error) {
						select { // waiting for volumes
						case <-ctx.Done():
						case <-time.After(time.Hour):
						}
						return false, rt.SyncPod(ctx, pod, s)
					},
					SyncTerminatingFunc: func(ctx context.Context, pod *v1.Pod, _ *int64) error { return rt.KillPod(ctx, pod, nil, 1) },
				}
				e := startDriver(t, syncer, true)
				pod := podWithGrace("1", "p", 30)
				pod.Spec.Containers = []v1.Container{{Name: "c"}}
				e.workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: pod})
				synctest.Wait()
				for _, f := range tc.terminate {
					f(e, pod)
				}
				advance(3 * time.Second)
				synctest.Wait()
				for _, c := range rt.Calls() {
					if strings.HasPrefix(c, "start") {
						t.Errorf("container started after termination was requested: %s", c)
					}
				}
				if !e.core.IsPodKnownTerminated("1") {
					t.Errorf("pod not terminated: the in-flight SyncPod was not cancelled")
				}
			})
		})
	}
}

// staticConfig is a ConfigSource with a switch for source readiness.
type staticConfig struct {
	pods  []*v1.Pod
	ready atomic.Bool
}

func (c *staticConfig) Pods() ([]*v1.Pod, []*v1.Pod) { return c.pods, nil }
func (c *staticConfig) SourcesReady() bool           { return c.ready.Load() }

func TestHousekeepingGating(t *testing.T) {
	// E53: housekeeping is skipped until every source has reported.
	synctest.Test(t, func(t *testing.T) {
		rt := lifecycletest.NewFakeRuntime()
		rt.AddPod("orphan", "o", "ns", "c")
		e := startDriver(t, &lifecycletest.FakeSyncer{}, true)
		cfg := &staticConfig{}
		loop := &lifecycle.SyncLoop{Config: cfg, Workers: e.workers, Clock: lifecycle.SystemClock{},
			Housekeeper: &lifecycle.Housekeeper{Workers: e.workers, Runtime: rt, Clock: lifecycle.SystemClock{}}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); loop.Run(ctx) }()
		advance(5 * time.Second)
		synctest.Wait()
		if calls := e.syncer.Calls(); len(calls) != 0 {
			t.Errorf("killed before sources were ready: %q", calls)
		}
		if !e.core.CouldHaveRunningContainers("unknown") {
			t.Errorf("unknown pod not possibly running before the first housekeeping")
		}
		cfg.ready.Store(true)
		advance(2 * time.Second)
		synctest.Wait()
		if calls := e.syncer.Calls(); !slices.Equal(calls, []string{"SyncTerminatingRuntimePod orphan"}) {
			t.Errorf("calls %q; want one runtime kill within one housekeeping period", calls)
		}
		if e.core.CouldHaveRunningContainers("unknown") {
			t.Errorf("unknown pod still possibly running after housekeeping")
		}
		cancel()
		<-done
	})
}

func TestPLEGRelist(t *testing.T) {
	ctx := context.Background()
	rt := lifecycletest.NewFakeRuntime()
	clock := lifecycletest.NewFakeClock(time.Unix(100, 0))
	cache := lifecycle.NewCache()
	g := lifecycle.NewPLEG(rt, cache, clock, nil)
	rt.AddPod("1", "p", "ns", "c")
	if err := g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	ev := <-g.Events()
	if ev.ID != "1" || ev.Type != lifecycle.ContainerStarted {
		t.Errorf("event %+v; want ContainerStarted for 1", ev)
	}
	st, _ := cache.Get("1")
	if !st.HasRunning() {
		t.Errorf("cache not updated: %+v", st)
	}
	clock.Step(time.Second)
	rt.ExitContainer("1", "c", 3)
	if err := g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	if ev := <-g.Events(); ev.Type != lifecycle.ContainerDied {
		t.Errorf("event %+v; want ContainerDied", ev)
	}
	if st, _ := cache.Get("1"); st.ContainerStatuses[0].ExitCode != 3 {
		t.Errorf("cache shows %+v; want exit 3", st.ContainerStatuses[0])
	}
	clock.Step(time.Second)
	if err := g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-g.Events():
		t.Errorf("unexpected event %+v with nothing changed", ev)
	default:
	}
	if err := g.Healthy(); err != nil {
		t.Errorf("healthy: %v", err)
	}
	clock.Step(4 * time.Minute)
	if g.Healthy() == nil {
		t.Errorf("healthy after 4 minutes without relist")
	}
}

// advance moves the virtual clock of the synctest bubble forward by d once
// every goroutine is blocked. It never waits in real time.
func advance(d time.Duration) {
	synctest.Wait()
	<-time.After(d)
}

func TestSyncLoopDeliversConfigUpdates(t *testing.T) {
	// Config changes reach the workers through the loop, in order.
	synctest.Test(t, func(t *testing.T) {
		e := startDriver(t, &lifecycletest.FakeSyncer{}, true)
		updates := make(chan lifecycle.ConfigChange)
		loop := &lifecycle.SyncLoop{Config: &staticConfig{}, Workers: e.workers, Updates: updates, Clock: lifecycle.SystemClock{},
			Housekeeper: &lifecycle.Housekeeper{Workers: e.workers, Runtime: lifecycletest.NewFakeRuntime(), Clock: lifecycle.SystemClock{}}}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); loop.Run(ctx) }()
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "1", Name: "p", Namespace: "ns"}}
		var committed atomic.Bool
		updates <- lifecycle.ConfigChange{
			Updates: []lifecycle.UpdatePodOptions{
				{UpdateType: lifecycle.UpdateCreate, Pod: p},
				{UpdateType: lifecycle.UpdateKill, Pod: p},
			},
			Commit: func() {
				if _, known := e.core.Inspect("1"); known {
					t.Errorf("updates reached the workers before the desired set was switched")
				}
				committed.Store(true)
			},
		}
		advance(3 * time.Second)
		synctest.Wait()
		if !e.core.IsPodTerminationRequested("1") {
			t.Errorf("kill delivered through Updates did not reach the workers")
		}
		if !committed.Load() {
			t.Errorf("the change was not committed when the loop took it")
		}
		cancel()
		<-done
	})
}

func TestWorkersAskForInspectionAfterSync(t *testing.T) {
	// The next sync needs a status newer than the end of this one: the
	// driver asks the PLEG to inspect the synced pod as soon as a sync
	// completes.
	synctest.Test(t, func(t *testing.T) {
		cache := lifecycle.NewCache()
		core := lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{Clock: lifecycle.SystemClock{}, Cache: cache})
		workers := lifecycle.NewWorkers(core, &lifecycletest.FakeSyncer{}, cache, nil)
		var asked []lifecycle.PodRef
		workers.Inspect = func(ref lifecycle.PodRef) { asked = append(asked, ref) }
		cache.UpdateTime(time.Now())
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); workers.Run(ctx) }()
		workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate,
			Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "1", Name: "p", Namespace: "ns"}}})
		synctest.Wait()
		want := lifecycle.PodRef{UID: "1", Name: "p", Namespace: "ns"}
		if len(asked) != 1 || asked[0] != want {
			t.Errorf("inspections asked for after the sync: %+v; want [%+v]", asked, want)
		}
		cancel()
		<-done
	})
}

// eventsAfterStatus is a runtime whose PodStatus records how many PLEG
// events were already out when the status was read.
type eventsAfterStatus struct {
	*lifecycletest.FakeRuntime
	events func() int
	seen   []int
}

func (r *eventsAfterStatus) PodStatus(ctx context.Context, uid types.UID, name, namespace string) (*lifecycle.PodStatus, error) {
	r.seen = append(r.seen, r.events())
	return r.FakeRuntime.PodStatus(ctx, uid, name, namespace)
}

// A worker woken by a PLEG event must find the status the event announces
// in the cache: the events go out after the cache was updated.
func TestPLEGEventsAfterCacheUpdate(t *testing.T) {
	ctx := context.Background()
	rt := &eventsAfterStatus{FakeRuntime: lifecycletest.NewFakeRuntime()}
	g, _, clock := newTestPLEG(rt)
	rt.events = func() int { return len(g.Events()) }
	rt.AddPod("1", "p", "ns", "c")
	if err := g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	<-g.Events()
	clock.Step(time.Second)
	rt.ExitContainer("1", "c", 3)
	if err := g.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	if len(rt.seen) != 2 || rt.seen[0] != 0 || rt.seen[1] != 0 {
		t.Fatalf("events already out when the statuses were read: %v; want none", rt.seen)
	}
	if ev := <-g.Events(); ev.Type != lifecycle.ContainerDied {
		t.Errorf("event %+v; want ContainerDied", ev)
	}
}

func TestSyncLoopSyncsPodsProbesAskFor(t *testing.T) {
	// A probe result that needs the runtime (a sidecar's startup) syncs
	// the pod at once, not at its next resync; a UID without config is
	// left to housekeeping.
	synctest.Test(t, func(t *testing.T) {
		e := startDriver(t, &lifecycletest.FakeSyncer{}, true)
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "1", Name: "p", Namespace: "ns"}}
		probeSyncs := make(chan types.UID)
		loop := &lifecycle.SyncLoop{Config: &staticConfig{pods: []*v1.Pod{p}}, Workers: e.workers, ProbeSyncs: probeSyncs, Clock: lifecycle.SystemClock{},
			Housekeeper: &lifecycle.Housekeeper{Workers: e.workers, Runtime: lifecycletest.NewFakeRuntime(), Clock: lifecycle.SystemClock{}}}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); loop.Run(ctx) }()
		e.workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: p})
		synctest.Wait()
		before := len(e.syncer.Calls())
		probeSyncs <- "1"
		probeSyncs <- "unknown"
		advance(time.Second) // the worker waits for a runtime status newer than its last sync
		synctest.Wait()
		if calls := e.syncer.Calls()[before:]; !slices.Equal(calls, []string{"SyncPod p sync"}) {
			t.Errorf("calls after the probe's request: %q; want one SyncPod", calls)
		}
		cancel()
		<-done
	})
}
