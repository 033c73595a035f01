package lifecycle

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func running(id string, started time.Time) *ContainerStatus {
	return &ContainerStatus{ID: id, Name: "c", State: ContainerRunning, StartedAt: started}
}

// probeTick is one period in a scripted run of a probe worker: what the
// worker sees, the outcome the probe would have if it runs, and what must
// follow.
type probeTick struct {
	in      probeInput
	outcome ProbeResult
	// wantRun, wantStop: the decision of next.
	wantRun, wantStop bool
	// wantSet is the result stored after the tick (by next or observe);
	// ProbeUnknown with wantStored false means nothing stored.
	wantStored bool
	wantSet    ProbeResult
	wantKill   bool
}

func runTicks(t *testing.T, w *probeState, ticks []probeTick) {
	t.Helper()
	for i, tk := range ticks {
		step := w.next(tk.in)
		stored, set, kill := step.set, step.result, false
		if step.run {
			if r, ok, k := w.observe(tk.outcome); ok {
				stored, set, kill = true, r, k
			}
		}
		if step.run != tk.wantRun || step.stop != tk.wantStop || stored != tk.wantStored || (stored && set != tk.wantSet) || kill != tk.wantKill {
			t.Fatalf("tick %d: run=%v stop=%v stored=%v set=%v kill=%v; want run=%v stop=%v stored=%v set=%v kill=%v",
				i, step.run, step.stop, stored, set, kill, tk.wantRun, tk.wantStop, tk.wantStored, tk.wantSet, tk.wantKill)
		}
	}
}

func TestProbeStateRules(t *testing.T) {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	c1 := running("c1", t0)
	c2 := running("c2", at(100))
	exited := &ContainerStatus{ID: "c1", Name: "c", State: ContainerExited}
	in := func(now int, c *ContainerStatus) probeInput {
		return probeInput{now: at(now), container: c, started: true}
	}
	tests := []struct {
		name  string
		kind  ProbeKind
		probe v1.Probe
		ticks []probeTick
	}{{
		name: "readiness starts unready, then success flips it at once",
		kind: Readiness, probe: v1.Probe{},
		ticks: []probeTick{
			{in: in(0, c1), outcome: ProbeSuccess, wantRun: true, wantStored: true, wantSet: ProbeSuccess},
			{in: in(10, c1), outcome: ProbeSuccess, wantRun: true, wantStored: true, wantSet: ProbeSuccess},
		},
	}, {
		name: "no probe within the initial delay; the initial result is stored",
		kind: Readiness, probe: v1.Probe{InitialDelaySeconds: 15},
		ticks: []probeTick{
			{in: in(0, c1), wantStored: true, wantSet: ProbeFailure},
			{in: in(10, c1)},
			{in: in(15, c1), outcome: ProbeSuccess, wantRun: true, wantStored: true, wantSet: ProbeSuccess},
		},
	}, {
		name: "readiness needs successThreshold successes in a row",
		kind: Readiness, probe: v1.Probe{SuccessThreshold: 2},
		ticks: []probeTick{
			{in: in(0, c1), outcome: ProbeSuccess, wantRun: true, wantStored: true, wantSet: ProbeFailure},
			{in: in(10, c1), outcome: ProbeFailure, wantRun: true, wantStored: false},
			{in: in(20, c1), outcome: ProbeSuccess, wantRun: true},
			{in: in(30, c1), outcome: ProbeSuccess, wantRun: true, wantStored: true, wantSet: ProbeSuccess},
		},
	}, {
		name: "readiness becomes failure after failureThreshold failures and keeps probing",
		kind: Readiness, probe: v1.Probe{FailureThreshold: 2},
		ticks: []probeTick{
			{in: in(0, c1), outcome: ProbeSuccess, wantRun: true, wantStored: true, wantSet: ProbeSuccess},
			{in: in(10, c1), outcome: ProbeFailure, wantRun: true},
			{in: in(20, c1), outcome: ProbeFailure, wantRun: true, wantStored: true, wantSet: ProbeFailure},
			{in: in(30, c1), outcome: ProbeFailure, wantRun: true, wantStored: true, wantSet: ProbeFailure},
		},
	}, {
		name: "liveness kills after failureThreshold failures, then holds until a new container",
		kind: Liveness, probe: v1.Probe{FailureThreshold: 3},
		ticks: []probeTick{
			{in: in(0, c1), outcome: ProbeFailure, wantRun: true, wantStored: true, wantSet: ProbeSuccess},
			{in: in(10, c1), outcome: ProbeFailure, wantRun: true},
			{in: in(20, c1), outcome: ProbeFailure, wantRun: true, wantStored: true, wantSet: ProbeFailure, wantKill: true},
			{in: in(30, c1)},
			{in: in(100, c2), outcome: ProbeSuccess, wantRun: true, wantStored: true, wantSet: ProbeSuccess},
		},
	}, {
		name: "a success between failures restarts the count",
		kind: Liveness, probe: v1.Probe{FailureThreshold: 2},
		ticks: []probeTick{
			{in: in(0, c1), outcome: ProbeFailure, wantRun: true, wantStored: true, wantSet: ProbeSuccess},
			{in: in(10, c1), outcome: ProbeSuccess, wantRun: true, wantStored: true, wantSet: ProbeSuccess},
			{in: in(20, c1), outcome: ProbeFailure, wantRun: true},
			{in: in(30, c1), outcome: ProbeFailure, wantRun: true, wantStored: true, wantSet: ProbeFailure, wantKill: true},
		},
	}, {
		name: "liveness and readiness wait for startup",
		kind: Liveness, probe: v1.Probe{},
		ticks: []probeTick{
			{in: probeInput{now: at(0), container: c1}, wantStored: true, wantSet: ProbeSuccess},
			{in: probeInput{now: at(10), container: c1}},
			{in: in(20, c1), outcome: ProbeSuccess, wantRun: true, wantStored: true, wantSet: ProbeSuccess},
		},
	}, {
		name: "startup probes until it succeeded, then never again",
		kind: Startup, probe: v1.Probe{},
		ticks: []probeTick{
			{in: probeInput{now: at(0), container: c1}, outcome: ProbeSuccess, wantRun: true, wantStored: true, wantSet: ProbeSuccess},
			{in: in(10, c1)},
		},
	}, {
		name: "startup failing failureThreshold times kills",
		kind: Startup, probe: v1.Probe{FailureThreshold: 2},
		ticks: []probeTick{
			{in: probeInput{now: at(0), container: c1}, outcome: ProbeFailure, wantRun: true, wantStored: true, wantSet: ProbeUnknown},
			{in: probeInput{now: at(10), container: c1}, outcome: ProbeFailure, wantRun: true, wantStored: true, wantSet: ProbeFailure, wantKill: true},
		},
	}, {
		name: "no probe for a terminating pod: the worker stops",
		kind: Readiness, probe: v1.Probe{},
		ticks: []probeTick{
			{in: probeInput{now: at(0), container: c1, started: true, terminating: true}, wantStop: true},
		},
	}, {
		name: "no probe for a container that is not running; readiness turns failure",
		kind: Readiness, probe: v1.Probe{},
		ticks: []probeTick{
			{in: in(0, c1), outcome: ProbeSuccess, wantRun: true, wantStored: true, wantSet: ProbeSuccess},
			{in: in(10, exited), wantStored: true, wantSet: ProbeFailure},
		},
	}, {
		name: "an exited container under restartPolicy Never stops the worker",
		kind: Liveness, probe: v1.Probe{},
		ticks: []probeTick{
			{in: probeInput{now: at(0), container: exited, restartNever: true, started: true}, wantStop: true, wantStored: true, wantSet: ProbeSuccess},
		},
	}, {
		name: "no container yet: nothing",
		kind: Liveness, probe: v1.Probe{},
		ticks: []probeTick{{in: probeInput{now: at(0), started: true}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &probeState{kind: tt.kind, probe: ProbeWithDefaults(&tt.probe)}
			runTicks(t, w, tt.ticks)
		})
	}
}

func TestProbeWithDefaults(t *testing.T) {
	got := ProbeWithDefaults(&v1.Probe{InitialDelaySeconds: 5})
	want := v1.Probe{InitialDelaySeconds: 5, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
	if got != want {
		t.Fatalf("defaults: got %+v, want %+v", got, want)
	}
	set := v1.Probe{TimeoutSeconds: 4, PeriodSeconds: 2, SuccessThreshold: 3, FailureThreshold: 7}
	if got := ProbeWithDefaults(&set); got != set {
		t.Fatalf("set fields changed: got %+v, want %+v", got, set)
	}
}

// TestProbeProperties drives a pod's three probe workers with random
// outcomes, restarts, terminations and clock steps, and checks after each
// step that the container is never ready (nor live-probed) before its
// startup probe succeeded, and that no probe runs once the pod is
// terminating.
func TestProbeProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c",
			StartupProbe:   &v1.Probe{FailureThreshold: rapid.Int32Range(1, 3).Draw(rt, "sf")},
			ReadinessProbe: &v1.Probe{SuccessThreshold: rapid.Int32Range(1, 3).Draw(rt, "rs")},
			LivenessProbe:  &v1.Probe{FailureThreshold: rapid.Int32Range(1, 3).Draw(rt, "lf")},
		}}}}
		pod.UID = "u"
		results := NewProbeResults()
		workers := map[ProbeKind]*probeState{}
		for _, k := range []ProbeKind{Startup, Readiness, Liveness} {
			workers[k] = &probeState{kind: k, probe: ProbeWithDefaults(probeOf(&pod.Spec.Containers[0], k))}
		}
		now, gen := t0, 0
		c := running("c0", now)
		terminating := false
		for i := range rapid.IntRange(1, 60).Draw(rt, "steps") {
			switch rapid.IntRange(0, 9).Draw(rt, "event") {
			case 0:
				gen++
				c = running(string(rune('a'+gen%26))+"-restart", now)
			case 1:
				c = &ContainerStatus{ID: c.ID, Name: "c", State: ContainerExited}
			case 2:
				terminating = true
			}
			now = now.Add(time.Duration(rapid.IntRange(1, 20).Draw(rt, "dt")) * time.Second)
			for _, k := range []ProbeKind{Startup, Readiness, Liveness} {
				w := workers[k]
				in := probeInput{now: now, terminating: terminating, container: c,
					started: results.passed(pod.UID, &pod.Spec.Containers[0], Startup, c.ID)}
				step := w.next(in)
				if step.run && terminating {
					rt.Fatalf("step %d: %s probe runs for a terminating pod", i, k)
				}
				if step.run && k != Startup && !in.started {
					rt.Fatalf("step %d: %s probe runs before startup succeeded", i, k)
				}
				if step.set {
					results.Set(pod.UID, "c", k, w.containerID, step.result)
				}
				if step.run {
					outcome := ProbeFailure
					if rapid.Bool().Draw(rt, "ok") {
						outcome = ProbeSuccess
					}
					if r, ok, _ := w.observe(outcome); ok {
						results.Set(pod.UID, "c", k, w.containerID, r)
					}
				}
			}
			started, ready := results.ContainerProbes(pod, "c", c.ID)
			startupOK, _ := results.Get(pod.UID, "c", Startup, c.ID)
			if ready && (!started || startupOK != ProbeSuccess) {
				rt.Fatalf("step %d: ready before startup succeeded (startup result %v)", i, startupOK)
			}
		}
	})
}
