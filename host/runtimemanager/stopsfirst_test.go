package runtimemanager

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/runtimemanager/runtimetestfake"
	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// stopsEnv is a Manager over the in-process fake inside a synctest
// bubble, whose StopContainer calls of held pods block until released.
type stopsEnv struct {
	t    *testing.T
	fake *runtimetestfake.Fake
	m    *Manager

	mu      sync.Mutex
	held    map[string]chan struct{} // pod UID → closed to let its stops return
	ended   []string                 // "<method> <pod>" of each call, in the order the calls returned
	podOfID map[string]string        // container or sandbox ID → pod name
}

func newStopsEnv(t *testing.T, pods ...*v1.Pod) *stopsEnv {
	fake := runtimetestfake.New(nil)
	m, err := New(Options{Runtime: runtimetestfake.Direct(fake), Clock: lifecycle.SystemClock{}, LogRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e := &stopsEnv{t: t, fake: fake, m: m, held: map[string]chan struct{}{}, podOfID: map[string]string{}}
	for _, pod := range pods {
		if err := m.SyncPod(t.Context(), pod, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range fake.Containers() {
		e.podOfID[c.GetId()] = c.GetLabels()[LabelPodName]
	}
	for _, sb := range fake.Sandboxes() {
		e.podOfID[sb.GetId()] = sb.GetLabels()[LabelPodName]
	}
	fake.Before = func(_ context.Context, method string, req proto.Message) error {
		if r, ok := req.(*runtimev1.StopContainerRequest); ok {
			e.mu.Lock()
			release := e.held[e.podOfID[r.GetContainerId()]]
			e.mu.Unlock()
			if release != nil {
				<-release
			}
		}
		return nil
	}
	fake.After = func(_ context.Context, method string, req proto.Message, err error) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.ended = append(e.ended, method+" "+e.podOfID[objectID(req)])
		return err
	}
	return e
}

func objectID(req proto.Message) string {
	switch r := req.(type) {
	case *runtimev1.StopContainerRequest:
		return r.GetContainerId()
	case *runtimev1.RemoveContainerRequest:
		return r.GetContainerId()
	case *runtimev1.StopSandboxRequest:
		return r.GetSandboxId()
	case *runtimev1.RemoveSandboxRequest:
		return r.GetSandboxId()
	}
	return ""
}

// stopping starts KillPod of the pod with its container stops held, waits
// until the kill is inside them, and returns the func that lets them return.
func (e *stopsEnv) stopping(pod string) (release func()) {
	release = e.hold(pod)
	go e.kill(pod)
	synctest.Wait()
	return release
}

// hold makes the pod's container stops block until the returned func runs.
func (e *stopsEnv) hold(pod string) (release func()) {
	ch := make(chan struct{})
	e.mu.Lock()
	e.held[pod] = ch
	e.mu.Unlock()
	return sync.OnceFunc(func() { close(ch) })
}

func (e *stopsEnv) has(call string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Contains(e.ended, call)
}

// wantBefore checks that call first returned, and then call then.
func (e *stopsEnv) wantBefore(t *testing.T, first, then string) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if a, b := slices.Index(e.ended, first), slices.Index(e.ended, then); a < 0 || b < a {
		t.Errorf("calls %v: want %q to return before %q", e.ended, first, then)
	}
}

// A pod's teardown waits for the container stops other pods have in
// flight, never for stops begun after it got there, and never longer than
// TeardownYield; RemovePod yields the same way. Judged from the calls the
// runtime returned, in their order.
func TestTeardownYieldsToStopsInFlight(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, e *stopsEnv)
	}{
		{"the sandbox stop waits for another pod's container stop", func(t *testing.T, e *stopsEnv) {
			releaseA := e.stopping("a")
			done := e.goKill("b")
			synctest.Wait()
			if !e.has("StopContainer b") || e.has("StopSandbox b") {
				t.Fatalf("while a's stop is in flight: calls %v; want b's container stopped and its sandbox not yet", e.ended)
			}
			releaseA()
			<-done
			e.wantBefore(t, "StopContainer a", "StopSandbox b")
		}},
		{"a stop that takes its whole grace holds others at most TeardownYield", func(t *testing.T, e *stopsEnv) {
			releaseA := e.stopping("a")
			defer synctest.Wait()
			defer releaseA()
			t0 := time.Now()
			done := e.goKill("b")
			time.Sleep(TeardownYield - time.Millisecond)
			synctest.Wait()
			if e.has("StopSandbox b") {
				t.Fatalf("b's sandbox stopped %v after its KillPod; want it to wait %v for a's stop", time.Since(t0), TeardownYield)
			}
			<-done
			if waited := time.Since(t0); waited != TeardownYield {
				t.Errorf("b's KillPod returned after %v; want %v", waited, TeardownYield)
			}
			if e.has("StopContainer a") {
				t.Errorf("a's stop returned; the test meant to hold it")
			}
		}},
		{"a stop begun after the teardown got there does not hold it", func(t *testing.T, e *stopsEnv) {
			releaseA := e.stopping("a")
			done := e.goKill("b")
			synctest.Wait()
			releaseC := e.stopping("c")
			defer synctest.Wait()
			defer releaseC()
			releaseA()
			<-done
			if !e.has("StopSandbox b") || e.has("StopContainer c") {
				t.Errorf("calls %v: want b's sandbox stopped while c's stop is still in flight", e.ended)
			}
		}},
		{"RemovePod waits for another pod's container stop", func(t *testing.T, e *stopsEnv) {
			e.kill("b")
			releaseA := e.stopping("a")
			done := make(chan struct{})
			go func() {
				defer close(done)
				if err := e.m.RemovePod(t.Context(), "uid-b"); err != nil {
					t.Errorf("RemovePod(b): %v", err)
				}
			}()
			synctest.Wait()
			if e.has("RemoveContainer b") || e.has("RemoveSandbox b") {
				t.Fatalf("while a's stop is in flight: calls %v; want nothing of b removed yet", e.ended)
			}
			releaseA()
			<-done
			e.wantBefore(t, "StopContainer a", "RemoveContainer b")
		}},
		{"a pod whose sandbox is made anew does not wait", func(t *testing.T, e *stopsEnv) {
			releaseA := e.stopping("a")
			defer synctest.Wait()
			defer releaseA()
			for _, sb := range e.fake.Sandboxes() {
				if sb.GetLabels()[LabelPodName] == "b" {
					e.fake.LoseSandbox(sb.GetId())
				}
			}
			t0 := time.Now()
			if err := e.m.SyncPod(t.Context(), newPod("b", "app"), nil); err != nil {
				t.Fatalf("SyncPod(b) after its sandbox died: %v", err)
			}
			if d := time.Since(t0); d != 0 || !e.has("StopSandbox b") {
				t.Errorf("SyncPod(b) took %v of virtual time, calls %v; want b's old sandbox stopped and a new one made at once", d, e.ended)
			}
		}},
		{"the yield ends at the pod's own grace deadline", func(t *testing.T, e *stopsEnv) {
			// b's container stops at once; a's stop, in flight, is held past
			// b's grace: b's kill must end within the 1 s it was given, so
			// that a caller timing it (KillPodNow) never sees it overrun.
			releaseA := e.stopping("a")
			defer synctest.Wait()
			defer releaseA()
			for _, grace := range []int64{1, 0} {
				t0 := time.Now()
				e.killWithGrace("b", grace)
				if d := time.Since(t0); d != time.Duration(grace)*time.Second {
					t.Errorf("KillPod(b, grace %d) took %v of virtual time while a's stop was in flight; want %ds", grace, d, grace)
				}
			}
			if !e.has("StopSandbox b") || e.has("StopContainer a") {
				t.Errorf("calls %v: want b's sandbox stopped while a's stop is still in flight", e.ended)
			}
		}},
		{"with no stop in flight nothing waits", func(t *testing.T, e *stopsEnv) {
			t0 := time.Now()
			e.kill("b")
			if err := e.m.RemovePod(t.Context(), "uid-b"); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(t0); d != 0 {
				t.Errorf("KillPod and RemovePod took %v of virtual time; want 0", d)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tt.run(t, newStopsEnv(t, newPod("a", "app"), newPod("b", "app"), newPod("c", "app")))
			})
		})
	}
}

// kill kills the pod with a grace period of TeardownYield.
func (e *stopsEnv) kill(name string) { e.killWithGrace(name, int64(TeardownYield/time.Second)) }

func (e *stopsEnv) killWithGrace(name string, grace int64) {
	if err := e.m.KillPod(e.t.Context(), newPod(name, "app"), nil, grace); err != nil {
		e.t.Errorf("KillPod(%s): %v", name, err)
	}
}

func (e *stopsEnv) goKill(name string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.kill(name)
	}()
	return done
}
