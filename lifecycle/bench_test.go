package lifecycle_test

import (
	"context"
	"fmt"
	"runtime"
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
		list := make([]*v1.Pod, pods)
		for i := range list {
			p := &v1.Pod{}
			p.UID, p.Name, p.Namespace = types.UID(fmt.Sprintf("uid-%d", i)), fmt.Sprintf("pod-%d", i), "bench"
			g := int64(1)
			p.Spec.TerminationGracePeriodSeconds = &g
			p.Spec.Containers = []v1.Container{{Name: "app"}}
			list[i] = p
			sink.Store(p)
		}
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
