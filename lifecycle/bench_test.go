package lifecycle_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// inlineDriver runs worker loops one wake at a time on the calling
// goroutine, reading the runtime status straight from the runtime (which
// has no latency, so it is always fresh).
type inlineDriver struct {
	core   *lifecycle.PodWorkers
	syncer lifecycle.PodSyncer
	rt     *lifecycletest.FakeRuntime
	loops  map[types.UID]<-chan struct{}
	ready  []types.UID
}

func (d *inlineDriver) update(o lifecycle.UpdatePodOptions) {
	if eff := d.core.UpdatePod(o); eff.NewWorker != nil {
		d.loops[o.Pod.UID] = eff.NewWorker
	}
	d.ready = append(d.ready, o.Pod.UID)
}

func (d *inlineDriver) drain(ctx context.Context) {
	for len(d.ready) > 0 {
		uid := d.ready[0]
		d.ready = d.ready[1:]
		ch, ok := d.loops[uid]
		if !ok {
			continue
		}
		select {
		case _, open := <-ch:
			if !open {
				delete(d.loops, uid)
				continue
			}
		default:
			continue
		}
		w, out := d.core.Begin(uid)
		if out == lifecycle.BeginExit {
			delete(d.loops, uid)
			continue
		}
		if out != lifecycle.BeginRun {
			continue
		}
		status, _ := d.rt.PodStatus(ctx, uid, w.Pod.Name, w.Pod.Namespace)
		var res lifecycle.WorkResult
		switch w.WorkType {
		case lifecycle.WorkSync:
			res.IsTerminal, res.Err = d.syncer.SyncPod(ctx, w.UpdateType, w.Pod, w.MirrorPod, status)
		case lifecycle.WorkTerminating:
			res.Err = d.syncer.SyncTerminatingPod(ctx, w.Pod, status, w.GracePeriod, w.StatusFunc)
		case lifecycle.WorkTerminated:
			res.Err = d.syncer.SyncTerminatedPod(ctx, w.Pod, status)
		}
		if d.core.Complete(w, res) {
			delete(d.loops, uid)
		}
		d.ready = append(d.ready, uid)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLifecycle10k takes 10,000 pods through create → running →
// delete → finished (status written to a sink, then the pod deleted from
// it) against an in-memory runtime with no latency.
func BenchmarkLifecycle10k(b *testing.B) {
	const pods = 10000
	ctx := context.Background()
	var cpu time.Duration
	var allocs uint64
	var heapPerPod float64
	lifecycles := 0
	for b.Loop() {
		clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
		rt := lifecycletest.NewFakeRuntime()
		rt.Record = false
		sink := lifecycletest.NewRecordingSink()
		metrics := lifecycle.NewMetrics(nil, clock)
		core := lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{Clock: clock, Cache: rt, Metrics: metrics})
		status := lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: clock, Sink: sink, Pods: core, Metrics: metrics})
		d := &inlineDriver{core: core, rt: rt, loops: map[types.UID]<-chan struct{}{},
			syncer: &lifecycle.Syncer{Runtime: rt, Status: status, Pods: core}}
		list := benchPods(pods, sink)
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heapBefore, mallocsBefore, cpuBefore := ms.HeapAlloc, ms.Mallocs, cpuTime()

		for _, p := range list {
			d.update(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: p, StartTime: clock.Now()})
		}
		d.drain(ctx)
		status.SyncBatch(ctx, false)

		cpuMid := cpuTime()
		runtime.ReadMemStats(&ms)
		mallocsMid := ms.Mallocs
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heapPerPod = float64(ms.HeapAlloc-heapBefore) / pods
		mallocsGC := ms.Mallocs
		cpuGC := cpuTime()
		for _, p := range list {
			if !core.CouldHaveRunningContainers(p.UID) {
				b.Fatal("pod not running")
			}
		}

		for _, p := range list {
			del := p.DeepCopy()
			ts := metav1.NewTime(clock.Now())
			one := int64(1)
			del.DeletionTimestamp, del.DeletionGracePeriodSeconds = &ts, &one
			sink.Store(del)
			d.update(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateUpdate, Pod: del})
		}
		d.drain(ctx)
		status.SyncBatch(ctx, false)
		core.SyncKnownPods(nil)

		cpuEnd := cpuTime()
		runtime.ReadMemStats(&ms)
		cpu += (cpuMid - cpuBefore) + (cpuEnd - cpuGC)
		allocs += (mallocsMid - mallocsBefore) + (ms.Mallocs - mallocsGC)
		lifecycles += pods
		for _, p := range list {
			if _, ok := sink.Pod(p.Namespace, p.Name); ok {
				b.Fatalf("pod %s not deleted from the sink", p.Name)
			}
		}
		if len(core.UIDs()) != 0 {
			b.Fatalf("%d workers left", len(core.UIDs()))
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(lifecycles), "cpu-µs/lifecycle")
	b.ReportMetric(float64(allocs)/float64(lifecycles), "allocs/lifecycle")
	b.ReportMetric(heapPerPod, "heap-bytes/running-pod")
}

// benchSyncer wraps the real Syncer for the goroutine benchmark: after each
// call it writes the runtime's status into the cache, as a PLEG with no
// latency would, and it counts started and finished pods.
type benchSyncer struct {
	*lifecycle.Syncer
	rt       *lifecycletest.FakeRuntime
	cache    *lifecycle.Cache
	fresh    time.Time
	pods     int64
	started  atomic.Int64
	finished atomic.Int64
	allUp    chan struct{}
	allDone  chan struct{}
}

func (s *benchSyncer) relist(ctx context.Context, pod *v1.Pod) {
	st, err := s.rt.PodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	s.cache.Set(pod.UID, st, err, s.fresh)
}

func (s *benchSyncer) SyncPod(ctx context.Context, ut lifecycle.UpdateType, pod, mirror *v1.Pod, st *lifecycle.PodStatus) (bool, error) {
	terminal, err := s.Syncer.SyncPod(ctx, ut, pod, mirror, st)
	s.relist(ctx, pod)
	if err == nil && ut == lifecycle.UpdateCreate && s.started.Add(1) == s.pods {
		close(s.allUp)
	}
	return terminal, err
}

func (s *benchSyncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, st *lifecycle.PodStatus, grace *int64, fn func(*v1.PodStatus)) error {
	err := s.Syncer.SyncTerminatingPod(ctx, pod, st, grace, fn)
	s.relist(ctx, pod)
	return err
}

func (s *benchSyncer) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, st *lifecycle.PodStatus) error {
	err := s.Syncer.SyncTerminatedPod(ctx, pod, st)
	if err == nil && s.finished.Add(1) == s.pods {
		close(s.allDone)
	}
	return err
}

// settle waits until no worker has work left; the counters fire just
// before the last Complete.
func settle(core *lifecycle.PodWorkers) {
	for core.Working() {
		runtime.Gosched()
	}
}

// BenchmarkLifecycle10kGoroutines is BenchmarkLifecycle10k through the
// production driver: Workers.Run with one goroutine per pod, UpdatePod from
// the caller, against the same in-memory runtime. The cache is written after
// every sync* call and is always newer than the worker's last sync (the
// core's clock stands still), so no worker waits for a relist.
func BenchmarkLifecycle10kGoroutines(b *testing.B) {
	const pods = 10000
	var cpu time.Duration
	var allocs uint64
	var heapPerPod, stackPerPod float64
	lifecycles := 0
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
		rt := lifecycletest.NewFakeRuntime()
		rt.Record = false
		sink := lifecycletest.NewRecordingSink()
		metrics := lifecycle.NewMetrics(nil, clock)
		cache := lifecycle.NewCache()
		fresh := clock.Now().Add(time.Second)
		cache.UpdateTime(fresh)
		core := lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{Clock: clock, Cache: cache, Metrics: metrics})
		status := lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: clock, Sink: sink, Pods: core, Metrics: metrics})
		syncer := &benchSyncer{
			Syncer: &lifecycle.Syncer{Runtime: rt, Status: status, Pods: core, Metrics: metrics, Clock: clock},
			rt:     rt, cache: cache, fresh: fresh, pods: pods,
			allUp: make(chan struct{}), allDone: make(chan struct{}),
		}
		workers := lifecycle.NewWorkers(core, syncer, cache, nil)
		list := benchPods(pods, sink)
		var wg sync.WaitGroup
		wg.Go(func() { workers.Run(ctx) })

		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heapBefore, stackBefore, mallocsBefore, cpuBefore := ms.HeapAlloc, ms.StackInuse, ms.Mallocs, cpuTime()

		for _, p := range list {
			workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: p, StartTime: clock.Now()})
		}
		<-syncer.allUp
		settle(core)
		status.SyncBatch(ctx, false)

		cpuMid := cpuTime()
		runtime.ReadMemStats(&ms)
		mallocsMid := ms.Mallocs
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heapPerPod = float64(ms.HeapAlloc-heapBefore) / pods
		stackPerPod = float64(ms.StackInuse-stackBefore) / pods
		mallocsGC := ms.Mallocs
		cpuGC := cpuTime()
		for _, p := range list {
			if !core.CouldHaveRunningContainers(p.UID) {
				b.Fatal("pod not running")
			}
		}

		for _, p := range list {
			del := p.DeepCopy()
			ts := metav1.NewTime(clock.Now())
			one := int64(1)
			del.DeletionTimestamp, del.DeletionGracePeriodSeconds = &ts, &one
			sink.Store(del)
			workers.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateUpdate, Pod: del})
		}
		<-syncer.allDone
		settle(core)
		status.SyncBatch(ctx, false)
		core.SyncKnownPods(nil)

		cpuEnd := cpuTime()
		runtime.ReadMemStats(&ms)
		cpu += (cpuMid - cpuBefore) + (cpuEnd - cpuGC)
		allocs += (mallocsMid - mallocsBefore) + (ms.Mallocs - mallocsGC)
		lifecycles += pods
		cancel()
		wg.Wait()
		for _, p := range list {
			if _, ok := sink.Pod(p.Namespace, p.Name); ok {
				b.Fatalf("pod %s not deleted from the sink", p.Name)
			}
		}
		if len(core.UIDs()) != 0 {
			b.Fatalf("%d workers left", len(core.UIDs()))
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(lifecycles), "cpu-µs/lifecycle")
	b.ReportMetric(float64(allocs)/float64(lifecycles), "allocs/lifecycle")
	b.ReportMetric(heapPerPod, "heap-bytes/running-pod")
	b.ReportMetric(stackPerPod, "stack-bytes/running-pod")
}

// benchPods returns n pods with one container and grace 1, stored in the sink.
func benchPods(n int, sink *lifecycletest.RecordingSink) []*v1.Pod {
	list := make([]*v1.Pod, n)
	for i := range list {
		p := &v1.Pod{}
		p.UID, p.Name, p.Namespace = types.UID(fmt.Sprintf("uid-%d", i)), fmt.Sprintf("pod-%d", i), "bench"
		g := int64(1)
		p.Spec.TerminationGracePeriodSeconds = &g
		p.Spec.Containers = []v1.Container{{Name: "app"}}
		list[i] = p
		sink.Store(p)
	}
	return list
}
