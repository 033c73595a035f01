package lifecycle_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// scriptedProber answers probes from a per-kind outcome the test sets and
// counts the probes run.
type scriptedProber struct {
	mu      sync.Mutex
	outcome map[lifecycle.ProbeKind]lifecycle.ProbeResult
	runs    map[lifecycle.ProbeKind]int
}

func (p *scriptedProber) RunProbe(_ context.Context, t lifecycle.ProbeTarget) (lifecycle.ProbeResult, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runs[t.Kind]++
	r := p.outcome[t.Kind]
	switch r {
	case lifecycle.ProbeFailure:
		return r, "HTTP probe failed with statuscode: 503", nil
	case lifecycle.ProbeWarning:
		return r, "Probe terminated redirects, Response body: moved", nil
	}
	return r, "", nil
}

func (p *scriptedProber) set(k lifecycle.ProbeKind, r lifecycle.ProbeResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.outcome[k] = r
}

func (p *scriptedProber) count(k lifecycle.ProbeKind) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs[k]
}

type recordedKills struct {
	mu    sync.Mutex
	kills []string
}

func (k *recordedKills) KillContainer(_ context.Context, _ *v1.Pod, name, id string, grace int64, _ string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kills = append(k.kills, name+"/"+id+"/"+time.Duration(grace*int64(time.Second)).String())
	return nil
}

func (k *recordedKills) list() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.kills)
}

type terminationSet struct {
	mu  sync.Mutex
	uid map[types.UID]bool
}

func (s *terminationSet) IsPodTerminationRequested(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uid[uid]
}

// probeFixture is a pod with the given probes, a running container in the
// runtime cache, a status manager that applies the probe results, and a
// probe manager on a fake clock.
type probeFixture struct {
	clock   *lifecycletest.FakeClock
	pod     *v1.Pod
	cache   *lifecycle.Cache
	status  *lifecycle.StatusManager
	prober  *scriptedProber
	kills   *recordedKills
	events  *lifecycletest.FakeRecorder
	term    *terminationSet
	manager *lifecycle.ProbeManager
}

func newProbeFixture(c v1.Container) *probeFixture {
	c.Name, c.Image = "web", "busybox"
	f := newProbeFixtureOf(v1.PodSpec{Containers: []v1.Container{c}}, nil)
	f.setContainer("c1")
	return f
}

// newProbeFixtureOf is a probeFixture of a pod with spec, without a
// runtime status yet; syncs, when set, receives the syncs the manager
// asks for.
func newProbeFixtureOf(spec v1.PodSpec, syncs chan<- types.UID) *probeFixture {
	f := &probeFixture{
		clock:  lifecycletest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		cache:  lifecycle.NewCache(),
		prober: &scriptedProber{outcome: map[lifecycle.ProbeKind]lifecycle.ProbeResult{}, runs: map[lifecycle.ProbeKind]int{}},
		kills:  &recordedKills{},
		events: &lifecycletest.FakeRecorder{},
		term:   &terminationSet{uid: map[types.UID]bool{}},
	}
	f.pod = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1"}, Spec: spec}
	results := lifecycle.NewProbeResults()
	f.status = lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: f.clock, Probes: results})
	f.manager = lifecycle.NewProbeManager(lifecycle.ProbeManagerConfig{
		Clock: f.clock, Runner: f.prober, Killer: f.kills, Results: results, Statuses: f.cache,
		Pods: f.term, Recorder: f.events, OnChange: f.status.RefreshProbes, Syncs: syncs,
	})
	return f
}

func (f *probeFixture) setContainer(id string) {
	rs := &lifecycle.PodStatus{ID: f.pod.UID, Name: "p", Namespace: "default", IPs: []string{"10.0.0.2"}, SandboxReady: true,
		ContainerStatuses: []lifecycle.ContainerStatus{{ID: id, Name: "web", State: lifecycle.ContainerRunning, StartedAt: f.clock.Now()}}}
	f.cache.Set(f.pod.UID, rs, nil, f.clock.Now())
	f.status.SetPodStatus(f.pod, lifecycle.GeneratePodStatus(f.pod, rs, v1.PodStatus{}, false, nil))
}

// ready returns the container's ready and the pod's Ready condition.
func (f *probeFixture) ready(t *testing.T) (bool, v1.ConditionStatus) {
	t.Helper()
	st, ok := f.status.PodStatus(f.pod.UID)
	if !ok || len(st.ContainerStatuses) != 1 {
		t.Fatalf("no status: %+v", st)
	}
	var cond v1.ConditionStatus
	for _, c := range st.Conditions {
		if c.Type == v1.PodReady {
			cond = c.Status
		}
	}
	return st.ContainerStatuses[0].Ready, cond
}

// period moves the clock one period (10 s) and lets every worker finish
// its step.
func (f *probeFixture) period() {
	synctest.Wait()
	f.clock.Step(10 * time.Second)
	synctest.Wait()
}

// run starts the manager and returns its stop function, which waits for
// every worker to be gone.
func (f *probeFixture) run() func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.manager.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

func TestProbeManagerReadinessDrivesReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newProbeFixture(v1.Container{ReadinessProbe: &v1.Probe{FailureThreshold: 2}})
		if ready, cond := f.ready(t); ready || cond != v1.ConditionFalse {
			t.Fatalf("before any probe: ready=%v Ready=%s; want false/False", ready, cond)
		}
		f.prober.set(lifecycle.Readiness, lifecycle.ProbeSuccess)
		stop := f.run()
		defer stop()
		f.manager.AddPod(f.pod)
		synctest.Wait()
		if ready, cond := f.ready(t); !ready || cond != v1.ConditionTrue {
			t.Fatalf("after a success: ready=%v Ready=%s; want true/True", ready, cond)
		}
		f.prober.set(lifecycle.Readiness, lifecycle.ProbeFailure)
		f.period()
		if ready, _ := f.ready(t); !ready {
			t.Fatal("one failure below failureThreshold 2 made the container unready")
		}
		f.period()
		if ready, cond := f.ready(t); ready || cond != v1.ConditionFalse {
			t.Fatalf("after 2 failures: ready=%v Ready=%s; want false/False", ready, cond)
		}
		if ev := f.events.Events(); len(ev) != 2 || !strings.Contains(ev[0], "Warning Unhealthy p: Readiness probe failed: HTTP probe failed with statuscode: 503") {
			t.Fatalf("events: %q", ev)
		}
		if len(f.kills.list()) != 0 {
			t.Fatalf("readiness failure killed: %q", f.kills.list())
		}
	})
}

func TestProbeManagerLivenessKills(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		grace := int64(7)
		f := newProbeFixture(v1.Container{LivenessProbe: &v1.Probe{FailureThreshold: 2, TerminationGracePeriodSeconds: &grace}})
		f.prober.set(lifecycle.Liveness, lifecycle.ProbeFailure)
		stop := f.run()
		defer stop()
		f.manager.AddPod(f.pod)
		synctest.Wait()
		if k := f.kills.list(); len(k) != 0 {
			t.Fatalf("killed after one failure: %q", k)
		}
		f.period()
		if k := f.kills.list(); !slices.Equal(k, []string{"web/c1/7s"}) {
			t.Fatalf("kills: %q; want web/c1 with the probe's grace 7s", k)
		}
		if ev := f.events.Events(); !slices.Contains(ev, "Normal Killing p: Container web failed liveness probe, will be restarted") {
			t.Fatalf("events: %q", ev)
		}
		runs := f.prober.count(lifecycle.Liveness)
		f.period()
		if got := f.prober.count(lifecycle.Liveness); got != runs {
			t.Fatalf("the killed container was probed again: %d runs, want %d", got, runs)
		}
		f.setContainer("c2")
		f.prober.set(lifecycle.Liveness, lifecycle.ProbeSuccess)
		f.period()
		if got := f.prober.count(lifecycle.Liveness); got != runs+1 {
			t.Fatalf("the restarted container: %d runs, want %d", got, runs+1)
		}
	})
}

func TestProbeManagerStartupGates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newProbeFixture(v1.Container{
			StartupProbe:   &v1.Probe{FailureThreshold: 5},
			ReadinessProbe: &v1.Probe{},
			LivenessProbe:  &v1.Probe{},
		})
		f.prober.set(lifecycle.Startup, lifecycle.ProbeFailure)
		f.prober.set(lifecycle.Readiness, lifecycle.ProbeSuccess)
		f.prober.set(lifecycle.Liveness, lifecycle.ProbeFailure)
		stop := f.run()
		defer stop()
		f.manager.AddPod(f.pod)
		f.period()
		f.period()
		if n, m := f.prober.count(lifecycle.Readiness), f.prober.count(lifecycle.Liveness); n != 0 || m != 0 {
			t.Fatalf("readiness ran %d, liveness %d times before startup succeeded", n, m)
		}
		if ready, cond := f.ready(t); ready || cond != v1.ConditionFalse {
			t.Fatalf("before startup: ready=%v Ready=%s", ready, cond)
		}
		f.prober.set(lifecycle.Startup, lifecycle.ProbeSuccess)
		f.period()
		f.period()
		if ready, cond := f.ready(t); !ready || cond != v1.ConditionTrue {
			t.Fatalf("after startup and readiness: ready=%v Ready=%s", ready, cond)
		}
		if n := f.prober.count(lifecycle.Liveness); n == 0 {
			t.Fatal("liveness never ran after startup succeeded")
		}
	})
}

func TestProbeManagerStopsForTerminatingPod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newProbeFixture(v1.Container{ReadinessProbe: &v1.Probe{}, LivenessProbe: &v1.Probe{}})
		f.prober.set(lifecycle.Readiness, lifecycle.ProbeSuccess)
		f.prober.set(lifecycle.Liveness, lifecycle.ProbeSuccess)
		stop := f.run()
		defer stop()
		f.manager.AddPod(f.pod)
		synctest.Wait()
		before := f.prober.count(lifecycle.Readiness) + f.prober.count(lifecycle.Liveness)
		f.term.mu.Lock()
		f.term.uid[f.pod.UID] = true
		f.term.mu.Unlock()
		f.period()
		f.period()
		if after := f.prober.count(lifecycle.Readiness) + f.prober.count(lifecycle.Liveness); after != before {
			t.Fatalf("%d probes ran while terminating", after-before)
		}
		if n := f.manager.Workers(); n != 0 {
			t.Fatalf("%d workers left for a terminating pod", n)
		}
	})
}

func TestProbeManagerStopPodLeavesNoWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newProbeFixture(v1.Container{ReadinessProbe: &v1.Probe{}, LivenessProbe: &v1.Probe{}, StartupProbe: &v1.Probe{}})
		stop := f.run()
		f.manager.AddPod(f.pod)
		f.manager.AddPod(f.pod)
		synctest.Wait()
		if n := f.manager.Workers(); n != 3 {
			t.Fatalf("workers: %d, want 3 (one per probe, added once)", n)
		}
		f.manager.RemovePod(f.pod.UID)
		synctest.Wait()
		if n := f.manager.Workers(); n != 0 {
			t.Fatalf("workers after RemovePod: %d", n)
		}
		stop()
		// synctest.Test fails if a goroutine of the bubble is left.
	})
}

// neverReady is a probe view that says no container ever started.
type neverReady struct{}

func (neverReady) ContainerProbes(*v1.Pod, string, string) (bool, bool) { return false, false }

// TestStatusManagerLeavesPodsWithoutProbes checks that a pod without a
// readiness or startup probe gets exactly the generated status, whatever
// the probe view says, and that one with a readiness probe gets the view's.
func TestStatusManagerLeavesPodsWithoutProbes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		container v1.Container
		wantReady bool
	}{
		{"no probes", v1.Container{}, true},
		{"liveness only", v1.Container{LivenessProbe: &v1.Probe{}}, true},
		{"readiness probe", v1.Container{ReadinessProbe: &v1.Probe{}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newProbeFixture(tc.container)
			sm := lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: f.clock, Probes: neverReady{}})
			rs, _ := f.cache.Get(f.pod.UID)
			sm.SetPodStatus(f.pod, lifecycle.GeneratePodStatus(f.pod, rs, v1.PodStatus{}, false, nil))
			st, _ := sm.PodStatus(f.pod.UID)
			if got := st.ContainerStatuses[0].Ready; got != tc.wantReady {
				t.Fatalf("ready %v; want %v", got, tc.wantReady)
			}
		})
	}
}

// slowProber takes d of the fake clock for every probe and records when
// each began.
type slowProber struct {
	clock  *lifecycletest.FakeClock
	d      time.Duration
	mu     sync.Mutex
	starts []time.Duration
	t0     time.Time
}

func (p *slowProber) RunProbe(ctx context.Context, _ lifecycle.ProbeTarget) (lifecycle.ProbeResult, string, error) {
	p.mu.Lock()
	p.starts = append(p.starts, p.clock.Now().Sub(p.t0))
	p.mu.Unlock()
	select {
	case <-p.clock.After(p.d):
	case <-ctx.Done():
	}
	return lifecycle.ProbeSuccess, "", nil
}

// TestProbeManagerKeepsThePeriod checks that probes start every
// periodSeconds, as the kubelet's ticker starts them, however long each
// takes: a probe of 300 ms does not push the next one 300 ms later; one
// that outlasts its period is followed at once by the next (the tick the
// ticker holds), and the ticks it missed are dropped.
func TestProbeManagerKeepsThePeriod(t *testing.T) {
	for _, tc := range []struct {
		name string
		took time.Duration
		want []time.Duration
	}{
		{"probe shorter than the period", 300 * time.Millisecond, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}},
		{"probe longer than the period", 1300 * time.Millisecond, []time.Duration{0, 1300 * time.Millisecond, 2600 * time.Millisecond, 3900 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newProbeFixture(v1.Container{ReadinessProbe: &v1.Probe{PeriodSeconds: 1}})
				p := &slowProber{clock: f.clock, d: tc.took, t0: f.clock.Now()}
				f.manager = lifecycle.NewProbeManager(lifecycle.ProbeManagerConfig{
					Clock: f.clock, Runner: p, Results: lifecycle.NewProbeResults(), Statuses: f.cache, Pods: f.term,
				})
				stop := f.run()
				defer stop()
				f.manager.AddPod(f.pod)
				for range 45 { // 4.5 s in steps of 100 ms
					synctest.Wait()
					f.clock.Step(100 * time.Millisecond)
				}
				synctest.Wait()
				p.mu.Lock()
				defer p.mu.Unlock()
				if !slices.Equal(p.starts, tc.want) {
					t.Errorf("probes began at %v; want %v", p.starts, tc.want)
				}
			})
		})
	}
}

// stuckExec is an exec probe runner whose runtime answers only once
// released (a loaded runtime); it records the calls and whether their ctx
// ended first.
type stuckExec struct {
	mu        sync.Mutex
	calls     int
	cancelled int
	release   chan struct{}
}

func (p *stuckExec) RunProbe(ctx context.Context, _ lifecycle.ProbeTarget) (lifecycle.ProbeResult, string, error) {
	p.mu.Lock()
	p.calls++
	p.mu.Unlock()
	select {
	case <-p.release:
		return lifecycle.ProbeSuccess, "", nil
	case <-ctx.Done():
		p.mu.Lock()
		p.cancelled++
		p.mu.Unlock()
		return lifecycle.ProbeUnknown, "", ctx.Err()
	}
}

// TestProbeManagerWaitsForTheRuntimeOnExec checks that an exec probe is
// not cut off at its timeoutSeconds: the runtime kills the command then
// and answers, and a call abandoned sooner would leave the command
// running while the next period starts another (execs piling up on a
// loaded runtime). The kubelet waits for the runtime's answer too; no
// other probe of the container starts meanwhile.
func TestProbeManagerWaitsForTheRuntimeOnExec(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newProbeFixture(v1.Container{ReadinessProbe: &v1.Probe{
			ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 1, TimeoutSeconds: 1}})
		p := &stuckExec{release: make(chan struct{})}
		f.manager = lifecycle.NewProbeManager(lifecycle.ProbeManagerConfig{
			Clock: f.clock, Runner: p, Results: lifecycle.NewProbeResults(), Statuses: f.cache, Pods: f.term,
		})
		stop := f.run()
		defer stop()
		f.manager.AddPod(f.pod)
		for range 5 {
			time.Sleep(time.Second) // the bubble's time, which the probe's ctx runs on
			f.clock.Step(time.Second)
			synctest.Wait()
		}
		p.mu.Lock()
		calls, cancelled := p.calls, p.cancelled
		p.mu.Unlock()
		if calls != 1 || cancelled != 0 {
			t.Fatalf("after 5 s of a runtime that does not answer: %d exec calls, %d cut off; want 1 call, still waited for", calls, cancelled)
		}
		close(p.release)
		synctest.Wait()
	})
}

// A success with a warning is a success that records a ProbeWarning event
// (upstream: should *not* be restarted with a non-local redirect http
// liveness probe).
func TestProbeManagerWarning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newProbeFixture(v1.Container{LivenessProbe: &v1.Probe{FailureThreshold: 1}})
		f.prober.set(lifecycle.Liveness, lifecycle.ProbeWarning)
		stop := f.run()
		defer stop()
		f.manager.AddPod(f.pod)
		synctest.Wait()
		f.period()
		if len(f.kills.list()) != 0 {
			t.Fatalf("a warning killed: %q", f.kills.list())
		}
		if ev := f.events.Events(); len(ev) == 0 || !strings.Contains(ev[0], "Warning ProbeWarning p: Liveness probe warning: Probe terminated redirects, Response body: moved") {
			t.Fatalf("events: %q", ev)
		}
	})
}

// When the startup probe succeeds the readiness probe runs at once, not a
// period later (upstream: Probing restartable init container should be
// ready immediately after startupProbe succeeds; its readiness period is
// 30 s, the startup probe's 5 s).
func TestProbeManagerReadinessRightAfterStartup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newProbeFixture(v1.Container{
			StartupProbe:   &v1.Probe{FailureThreshold: 100, PeriodSeconds: 10},
			ReadinessProbe: &v1.Probe{PeriodSeconds: 3600},
		})
		f.prober.set(lifecycle.Startup, lifecycle.ProbeFailure)
		f.prober.set(lifecycle.Readiness, lifecycle.ProbeSuccess)
		stop := f.run()
		defer stop()
		f.manager.AddPod(f.pod)
		f.period()
		f.prober.set(lifecycle.Startup, lifecycle.ProbeSuccess)
		f.period()
		if ready, cond := f.ready(t); !ready || cond != v1.ConditionTrue {
			t.Fatalf("a period of the startup probe after it succeeded: ready=%v Ready=%s; want ready long before the readiness period", ready, cond)
		}
	})
}
