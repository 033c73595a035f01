package runtimemanager

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// recorded is a lifecycle.Recorder that keeps "Type Reason: message".
type recorded struct {
	mu     sync.Mutex
	events []string
}

func (r *recorded) Event(_ *v1.Pod, eventType, reason, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, eventType+" "+reason+": "+message)
}

func (r *recorded) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

func TestEventsOfEachStep(t *testing.T) {
	e := newEnv(t)
	rec := &recorded{}
	m, err := New(Options{Runtime: e.client, Clock: e.clock, LogRoot: e.root, Reasons: e.reasons, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	pod := newPod("events", "app")
	e.mustSync(pod)
	want := []string{
		`Normal Pulled: Successfully pulled image "busybox:1.36"`,
		"Normal Created: Created container app",
		"Normal Started: Started container app",
	}
	if got := rec.take(); !slices.Equal(got, want) {
		t.Errorf("start: events %q; want %q", got, want)
	}

	e.exit(pod, "app", 1)
	if err := e.sync(pod); !errors.Is(err, ErrCrashLoopBackOff) {
		t.Fatalf("SyncPod after exit: %v; want back-off", err)
	}
	want = []string{"Warning BackOff: Back-off restarting failed container app in pod events_default(uid-events)"}
	if got := rec.take(); !slices.Equal(got, want) {
		t.Errorf("back-off: events %q; want %q", got, want)
	}

	e.clock.Step(BackOffInitial)
	e.mustSync(pod)
	rec.take()
	if err := e.m.KillPod(context.Background(), pod, nil, 1); err != nil {
		t.Fatal(err)
	}
	want = []string{"Normal Killing: Stopping container app"}
	if got := rec.take(); !slices.Equal(got, want) {
		t.Errorf("kill: events %q; want %q", got, want)
	}

	bad := newPod("unpullable", "app")
	bad.Spec.Containers[0].Image = "registry.invalid/image:1"
	if err := e.sync(bad); !errors.Is(err, ErrImagePull) {
		t.Fatalf("SyncPod with a bad image: %v; want ErrImagePull", err)
	}
	if got := rec.take(); len(got) != 1 || !strings.HasPrefix(got[0], `Warning Failed: Failed to pull image "registry.invalid/image:1"`) {
		t.Errorf("bad image: events %q; want one Warning Failed to pull image", got)
	}
}
