package runtimemanager

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// scriptedHooks records the hooks run, lets each take fake time, and
// fails or blocks the ones the test asks.
type scriptedHooks struct {
	mu    sync.Mutex
	clock *lifecycletest.FakeClock
	ran   []string
	takes time.Duration
	fail  bool
	block bool
}

func (h *scriptedHooks) RunHook(ctx context.Context, _ *v1.Pod, c *v1.Container, id, _ string, hook *v1.LifecycleHandler) error {
	kind := "postStart"
	if c.Lifecycle.PreStop == hook {
		kind = "preStop"
	}
	h.mu.Lock()
	h.ran = append(h.ran, kind+" "+c.Name)
	fail, block, takes := h.fail, h.block, h.takes
	h.mu.Unlock()
	h.clock.Step(takes)
	if block {
		<-ctx.Done()
		return ctx.Err()
	}
	if fail {
		return errors.New("exit 1")
	}
	return nil
}

func withHooks(pod *v1.Pod, postStart, preStop bool) *v1.Pod {
	lc := &v1.Lifecycle{}
	if postStart {
		lc.PostStart = &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}
	}
	if preStop {
		lc.PreStop = &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}
	}
	pod.Spec.Containers[0].Lifecycle = lc
	return pod
}

func newHookEnv(t *testing.T) (*env, *scriptedHooks) {
	e := newEnv(t)
	h := &scriptedHooks{clock: e.clock}
	m, err := New(Options{Runtime: e.client, Clock: e.clock, LogRoot: e.root, Reasons: e.reasons, Plugin: "fake", Hooks: h, Recorder: &lifecycletest.FakeRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	return e, h
}

// stopTimeouts returns the timeouts of the StopContainer calls made.
func stopTimeouts(e *env) []int64 {
	var out []int64
	for _, c := range e.fake.Calls() {
		if c.Method == "StopContainer" {
			out = append(out, c.Req.(*runtimev1.StopContainerRequest).GetTimeoutSeconds())
		}
	}
	return out
}

func TestPreStopRunsInsideTheGracePeriod(t *testing.T) {
	tests := []struct {
		name      string
		takes     time.Duration
		block     bool
		fail      bool
		wantStops []int64
	}{
		{name: "the stop gets what the hook left", takes: 3 * time.Second, wantStops: []int64{7}},
		{name: "a failed hook still stops with what is left", takes: time.Second, fail: true, wantStops: []int64{9}},
		{name: "a hook using the whole grace period: kill at once", takes: 12 * time.Second, wantStops: []int64{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, h := newHookEnv(t)
			pod := withHooks(newPod("p", "app"), false, true)
			e.mustSync(pod)
			h.takes, h.fail, h.block = tt.takes, tt.fail, tt.block
			if err := e.m.KillPod(context.Background(), pod, nil, 10); err != nil {
				t.Fatalf("KillPod: %v", err)
			}
			if !slices.Equal(h.ran, []string{"preStop app"}) {
				t.Fatalf("hooks run: %q", h.ran)
			}
			if got := stopTimeouts(e); !slices.Equal(got, tt.wantStops) {
				t.Fatalf("StopContainer timeouts: %v; want %v", got, tt.wantStops)
			}
		})
	}
}

func TestPreStopOutlivingTheGracePeriodIsCutOff(t *testing.T) {
	e, h := newHookEnv(t)
	pod := withHooks(newPod("p", "app"), false, true)
	e.mustSync(pod)
	h.block = true
	if err := e.m.KillPod(context.Background(), pod, nil, 1); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	if got := stopTimeouts(e); !slices.Equal(got, []int64{0}) {
		t.Fatalf("StopContainer timeouts: %v; want [0]: killed at the deadline", got)
	}
	if got := e.container(pod, "app").State; got != lifecycle.ContainerExited {
		t.Fatalf("container after kill: %s", got)
	}
}

func TestPostStartHook(t *testing.T) {
	t.Run("runs after the start", func(t *testing.T) {
		e, h := newHookEnv(t)
		pod := withHooks(newPod("p", "app"), true, false)
		e.mustSync(pod)
		if !slices.Equal(h.ran, []string{"postStart app"}) {
			t.Fatalf("hooks run: %q", h.ran)
		}
		if got := e.container(pod, "app").State; got != lifecycle.ContainerRunning {
			t.Fatalf("container: %s; want running", got)
		}
	})
	t.Run("a failure kills the container", func(t *testing.T) {
		e, h := newHookEnv(t)
		h.fail = true
		pod := withHooks(newPod("p", "app"), true, true)
		err := e.sync(pod)
		if !errors.Is(err, ErrPostStartHook) {
			t.Fatalf("SyncPod: %v; want ErrPostStartHook", err)
		}
		if got := e.container(pod, "app").State; got != lifecycle.ContainerExited {
			t.Fatalf("container: %s; want exited", got)
		}
		if !slices.Equal(h.ran, []string{"postStart app", "preStop app"}) {
			t.Fatalf("hooks run: %q; want postStart then preStop", h.ran)
		}
		ev := e.m.opts.Recorder.(*lifecycletest.FakeRecorder).Events()
		if !slices.ContainsFunc(ev, func(s string) bool {
			return strings.HasPrefix(s, "Warning FailedPostStartHook p: PostStartHook of container app failed")
		}) {
			t.Fatalf("events: %q", ev)
		}
		if r, ok := e.reasons.Get(pod.UID, "app"); !ok || r.Reason != ReasonPostStartHookError {
			t.Fatalf("reason: %+v %v", r, ok)
		}
	})
	t.Run("no hooks without a runner", func(t *testing.T) {
		e := newEnv(t)
		pod := withHooks(newPod("p", "app"), true, true)
		e.mustSync(pod)
		if err := e.m.KillPod(context.Background(), pod, nil, 10); err != nil {
			t.Fatal(err)
		}
		if got := stopTimeouts(e); !slices.Equal(got, []int64{10}) {
			t.Fatalf("StopContainer timeouts: %v; want [10]", got)
		}
	})
}
