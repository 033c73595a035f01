package lifecycle_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// slowLister is a runtime whose listing takes d on the fake clock.
type slowLister struct {
	rt    *lifecycletest.FakeRuntime
	clock *lifecycletest.FakeClock
	d     time.Duration
}

func (s slowLister) ListPods(ctx context.Context) ([]*lifecycle.RunningPod, error) {
	s.clock.Step(s.d)
	return s.rt.ListPods(ctx)
}

func TestHousekeepingTooLong(t *testing.T) {
	// E53: a pass longer than one second logs "housekeeping took too long".
	for _, tt := range []struct {
		took time.Duration
		warn bool
	}{{500 * time.Millisecond, false}, {time.Second, false}, {1500 * time.Millisecond, true}} {
		t.Run("E53 pass of "+tt.took.String(), func(t *testing.T) {
			clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
			core := lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{Clock: clock})
			logs := &lifecycletest.LogRecorder{}
			h := &lifecycle.Housekeeper{
				Workers: lifecycle.NewWorkers(core, &lifecycletest.FakeSyncer{}, lifecycle.NewCache(), nil),
				Runtime: slowLister{rt: lifecycletest.NewFakeRuntime(), clock: clock, d: tt.took},
				Clock:   clock, Logger: logs.Logger(),
			}
			if err := h.Cleanup(context.Background(), nil, nil); err != nil {
				t.Fatal(err)
			}
			if got := logs.Contains("housekeeping took too long"); got != tt.warn {
				t.Errorf("warning logged %t; want %t (logs %q)", got, tt.warn, logs.Lines())
			}
		})
	}
}

func TestStaticPodRestartWithinHousekeepingPeriod(t *testing.T) {
	// E53 (and invariant 6): a UID-reused static pod restarts at most one
	// housekeeping period (2 s) after its predecessor finished, on the fake
	// clock, through the real sync loop and goroutine driver.
	synctest.Test(t, func(t *testing.T) {
		clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
		reg := prometheus.NewRegistry()
		metrics := lifecycle.NewMetrics(reg, clock)
		cache := lifecycle.NewCache()
		core := lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{Clock: clock, Cache: cache, Metrics: metrics})

		var mu sync.Mutex
		var finishedAt time.Time
		var createdAt []time.Time
		syncer := &lifecycletest.FakeSyncer{
			SyncPodFunc: func(context.Context, *v1.Pod, *lifecycle.PodStatus) (bool, error) {
				mu.Lock()
				defer mu.Unlock()
				createdAt = append(createdAt, clock.Now())
				return false, nil
			},
			// Termination takes 2.3 s, so that the predecessor finishes
			// between two housekeeping ticks.
			SyncTerminatingFunc: func(ctx context.Context, _ *v1.Pod, _ *int64) error {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-clock.After(2300 * time.Millisecond):
					return nil
				}
			},
			SyncTerminatedFunc: func(context.Context, *v1.Pod) error {
				mu.Lock()
				defer mu.Unlock()
				finishedAt = clock.Now()
				return nil
			},
		}
		workers := lifecycle.NewWorkers(core, syncer, cache, nil)
		v1pod := podWithGrace("s", "web", 30)
		v1pod.Annotations = map[string]string{lifecycle.ConfigSourceAnnotation: "file"}
		v2pod := v1pod.DeepCopy()
		v2pod.Labels = map[string]string{"version": "2"}
		cfg := &staticConfig{pods: []*v1.Pod{v2pod}}
		cfg.ready.Store(true)
		loop := &lifecycle.SyncLoop{Config: cfg, Workers: workers, Clock: clock,
			Housekeeper: &lifecycle.Housekeeper{Workers: workers, Runtime: lifecycletest.NewFakeRuntime(), Clock: clock, Metrics: metrics}}

		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { workers.Run(ctx) })
		wg.Go(func() { loop.Run(ctx) })
		step := func(n int) { // n steps of 100 ms, each followed by a relist
			for range n {
				synctest.Wait()
				clock.Step(100 * time.Millisecond)
				cache.UpdateTime(clock.Now())
			}
			synctest.Wait()
		}

		workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: v1pod})
		step(3)
		workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateKill, Pod: v1pod})
		step(1)
		workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: v2pod})
		if st, _ := core.Inspect("s"); !st.RestartRequested {
			t.Fatalf("create during termination did not request a restart: %+v", st)
		}
		step(100)
		cancel()
		wg.Wait()

		mu.Lock()
		defer mu.Unlock()
		if finishedAt.IsZero() || len(createdAt) != 2 {
			t.Fatalf("finished at %v, SyncPod at %v; want one finish and two SyncPod calls", finishedAt, createdAt)
		}
		restart := createdAt[1].Sub(finishedAt)
		if restart <= 0 || restart > lifecycle.HousekeepingPeriod {
			t.Errorf("restart %s after the predecessor finished; want within (0, %s]", restart, lifecycle.HousekeepingPeriod)
		}
		t.Logf("predecessor finished at +%s, restarted %s later", finishedAt.Sub(time.Unix(1000, 0)), restart)
		if got := testutil.ToFloat64(metrics.RestartedPods.WithLabelValues("true")); got != 1 {
			t.Errorf("kubelet_restarted_pods_total{static=\"true\"} = %g; want 1", got)
		}
		if calls := syncer.Calls(); !slices.Equal(calls, []string{"SyncPod web create", "SyncTerminatingPod web grace=30", "SyncTerminatedPod web", "SyncPod web create"}) {
			t.Errorf("calls %q", calls)
		}
	})
}

// knownWorkers is a PodWorkerSet whose SyncKnownPods reports a fixed set.
type knownWorkers struct {
	lifecycle.PodWorkerSet
	known map[types.UID]lifecycle.PodWorkerSync
}

func (k knownWorkers) SyncKnownPods([]*v1.Pod) map[types.UID]lifecycle.PodWorkerSync { return k.known }

func TestWorkingPodsUnexpectedLabels(t *testing.T) {
	// A worker that fits none of the 15 kubelet_working_pods series is
	// logged, not dropped silently.
	for _, tc := range []struct {
		name  string
		known lifecycle.PodWorkerSync
		warn  bool
	}{
		{"a desired syncing pod fits a series", lifecycle.PodWorkerSync{State: lifecycle.WorkSync, HasConfig: true}, false},
		{"a runtime-only orphan fits a series", lifecycle.PodWorkerSync{State: lifecycle.WorkTerminating, Orphan: true}, false},
		{"an unknown work type is logged", lifecycle.PodWorkerSync{State: lifecycle.WorkType(9), HasConfig: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
			logs := &lifecycletest.LogRecorder{}
			reg := prometheus.NewRegistry()
			h := &lifecycle.Housekeeper{
				Workers: knownWorkers{known: map[types.UID]lifecycle.PodWorkerSync{"1": tc.known}},
				Runtime: lifecycletest.NewFakeRuntime(), Metrics: lifecycle.NewMetrics(reg, clock),
				Clock: clock, Logger: logs.Logger(),
			}
			if err := h.Cleanup(t.Context(), nil, nil); err != nil {
				t.Fatal(err)
			}
			if got := logs.Contains("kubelet_working_pods"); got != tc.warn {
				t.Errorf("unexpected series logged %t; want %t (logs %q)", got, tc.warn, logs.Lines())
			}
		})
	}
}
