package lifecycle_test

import (
	"context"
	"sync"
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

// readCounting counts the runtime's reads: listings and pod inspections.
type readCounting struct {
	*lifecycletest.FakeRuntime
	lists, statuses atomic.Int32
}

func (r *readCounting) ListPods(ctx context.Context) ([]*lifecycle.RunningPod, error) {
	r.lists.Add(1)
	return r.FakeRuntime.ListPods(ctx)
}

func (r *readCounting) PodStatus(ctx context.Context, uid types.UID, name, namespace string) (*lifecycle.PodStatus, error) {
	r.statuses.Add(1)
	return r.FakeRuntime.PodStatus(ctx, uid, name, namespace)
}

// tickingClock moves on by a millisecond at every reading, as real time
// passes between two readings: inside a synctest bubble time stands still
// until every goroutine blocks, and a status read right after a sync would
// otherwise carry the sync's own end time, not a newer one.
type tickingClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func (c *tickingClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// TestPodLifecycleRuntimeReads counts the runtime reads the PLEG makes for
// one pod's lifecycle (create, run, kill, terminated), driven as the host
// drives it while the runtime's event stream is open: a relist when the
// stream opens, the slow safety-net period, and the driver's request after
// every sync. Other pods stay idle on the node, as under steady churn.
// Each sync needs a status of its pod newer than its previous sync: the
// PLEG must give it by inspecting that one pod, not by relisting the node.
func TestPodLifecycleRuntimeReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &tickingClock{t: time.Unix(1000, 0)}
		rt := &readCounting{FakeRuntime: lifecycletest.NewFakeRuntime()}
		for _, uid := range []types.UID{"idle-1", "idle-2", "idle-3"} {
			rt.AddPod(uid, string(uid), "ns", "c")
		}
		cache := lifecycle.NewCache()
		core := lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{Clock: clock, Cache: cache})
		status := lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: clock, Sink: lifecycletest.NewRecordingSink(), Pods: core})
		workers := lifecycle.NewWorkers(core, &lifecycle.Syncer{Runtime: rt, Status: status, Pods: core}, cache, nil)
		pleg := lifecycle.NewPLEG(rt, cache, clock, nil)
		workers.Inspect = pleg.Request

		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() { workers.Run(ctx) })
		wg.Go(func() { pleg.Run(ctx, 30*time.Second, nil) })
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-pleg.Events():
				}
			}
		})
		synctest.Wait()
		lists0, statuses0 := rt.lists.Load(), rt.statuses.Load()

		grace := int64(0)
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "1", Name: "p", Namespace: "ns"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}, TerminationGracePeriodSeconds: &grace}}
		workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: pod})
		synctest.Wait()
		if st, _ := rt.Get("1"); st == nil || st.Container("c") == nil || st.Container("c").State != lifecycle.ContainerRunning {
			t.Fatalf("pod did not start: %+v", st)
		}
		workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateKill, Pod: pod})
		synctest.Wait()
		if !core.ShouldPodBeFinished("1") {
			t.Fatal("pod did not finish")
		}
		lists, statuses := rt.lists.Load()-lists0, rt.statuses.Load()-statuses0
		cancel()
		wg.Wait()

		// An inspection of the pod after SyncPod and after
		// SyncTerminatingPod (none after SyncTerminatedPod: nothing waits
		// for a status of a finished pod), and the check after the kill
		// that nothing runs; no listing of the node.
		t.Logf("one pod lifecycle: %d listings, %d pod inspections", lists, statuses)
		if lists != 0 || statuses > 3 {
			t.Errorf("one pod lifecycle made %d listings and %d pod inspections; want 0 listings and at most 3 inspections", lists, statuses)
		}
	})
}
