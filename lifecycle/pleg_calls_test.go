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
	t.Run("driver requests only", func(t *testing.T) { podLifecycleRuntimeReads(t, false) })
	// The runtime also tells of every change the syncs make, while they
	// are in flight, as runtime-containerd does: each event must not cost
	// an inspection of its own (they cost seven more before the PLEG held
	// an in-flight sync's events and skipped the settled ones).
	t.Run("with the runtime's events", func(t *testing.T) { podLifecycleRuntimeReads(t, true) })
}

// eventing reports each change its syncs and kills make to the PLEG as
// the runtime's event stream does, before the call returns, and lets the
// PLEG serve each report before the call goes on (a bubble's sleep ends
// only once every other goroutine waits), as a real sync is slow enough
// for.
type eventing struct {
	*readCounting
	pleg *lifecycle.PLEG
	sent atomic.Int32
}

func (r *eventing) SyncPod(ctx context.Context, pod *v1.Pod, status *lifecycle.PodStatus) error {
	before, _ := r.Get(pod.UID)
	err := r.readCounting.SyncPod(ctx, pod, status)
	r.report(pod, before)
	return err
}

func (r *eventing) KillPod(ctx context.Context, pod *v1.Pod, running *lifecycle.RunningPod, grace int64) error {
	before, _ := r.Get(pod.UID)
	err := r.readCounting.KillPod(ctx, pod, running, grace)
	r.report(pod, before)
	return err
}

func (r *eventing) report(pod *v1.Pod, before *lifecycle.PodStatus) {
	after, _ := r.Get(pod.UID)
	ref := lifecycle.PodRef{UID: pod.UID, Name: pod.Name, Namespace: pod.Namespace}
	if before.SandboxReady != after.SandboxReady {
		r.pleg.RequestEvent(ref, lifecycle.Hint{})
		r.sent.Add(1)
		time.Sleep(time.Millisecond)
	}
	for _, c := range after.ContainerStatuses {
		if old := before.Container(c.Name); old == nil || old.ID != c.ID || old.State != c.State {
			r.pleg.RequestEvent(ref, lifecycle.Hint{ContainerID: c.ID, State: c.State})
			r.sent.Add(1)
			time.Sleep(time.Millisecond)
		}
	}
}

// eventWired wires the production driver and a PLEG over runtime as the
// host does while the runtime's event stream is open: the driver asks for
// an inspection after each sync, and the PLEG holds the events of a pod
// whose sync is in flight. ev reports its changes to that PLEG.
func eventWired(clock lifecycle.Clock, runtime lifecycle.Runtime, ev *eventing) (*lifecycle.PodWorkers, *lifecycle.Workers, *lifecycle.PLEG, *lifecycle.Cache) {
	cache := lifecycle.NewCache()
	core := lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{Clock: clock, Cache: cache})
	status := lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: clock, Sink: lifecycletest.NewRecordingSink(), Pods: core})
	workers := lifecycle.NewWorkers(core, &lifecycle.Syncer{Runtime: runtime, Status: status, Pods: core}, cache, nil)
	pleg := lifecycle.NewPLEG(runtime, cache, clock, nil)
	ev.pleg = pleg
	workers.Inspect, workers.Released, pleg.Busy = pleg.Request, pleg.Release, workers.Syncing
	return core, workers, pleg, cache
}

// drainEvents reads the PLEG's events until ctx ends, as the sync loop
// would, so that its channel never fills.
func drainEvents(ctx context.Context, pleg *lifecycle.PLEG) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-pleg.Events():
		}
	}
}

func podLifecycleRuntimeReads(t *testing.T, withEvents bool) {
	synctest.Test(t, func(t *testing.T) {
		clock := &tickingClock{t: time.Unix(1000, 0)}
		counting := &readCounting{FakeRuntime: lifecycletest.NewFakeRuntime()}
		rt := &eventing{readCounting: counting}
		var runtime lifecycle.Runtime = counting
		if withEvents {
			runtime = rt
		}
		for _, uid := range []types.UID{"idle-1", "idle-2", "idle-3"} {
			rt.AddPod(uid, string(uid), "ns", "c")
		}
		core, workers, pleg, _ := eventWired(clock, runtime, rt)

		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() { workers.Run(ctx) })
		wg.Go(func() { pleg.Run(ctx, 30*time.Second, nil) })
		wg.Go(func() { drainEvents(ctx, pleg) })
		synctest.Wait()
		lists0, statuses0 := rt.lists.Load(), rt.statuses.Load()

		grace := int64(0)
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "1", Name: "p", Namespace: "ns"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}, TerminationGracePeriodSeconds: &grace}}
		// Long enough for the runtime's pauses, short of the safety relist.
		settle := func() { time.Sleep(time.Second); synctest.Wait() }
		workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: pod})
		settle()
		if st, _ := rt.Get("1"); st == nil || st.Container("c") == nil || st.Container("c").State != lifecycle.ContainerRunning {
			t.Fatalf("pod did not start: %+v", st)
		}
		workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateKill, Pod: pod})
		settle()
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
		t.Logf("one pod lifecycle: %d listings, %d pod inspections, %d runtime events", lists, statuses, rt.sent.Load())
		if withEvents && rt.sent.Load() < 3 {
			t.Fatalf("the runtime told of %d changes; want at least 3 (sandbox, start, exit)", rt.sent.Load())
		}
		if lists != 0 || statuses > 3 {
			t.Errorf("one pod lifecycle made %d listings and %d pod inspections; want 0 listings and at most 3 inspections", lists, statuses)
		}
	})
}
