package runtimemanager

import (
	"context"
	"sync"
	"time"
)

// TeardownYield is the longest a pod's teardown waits for the container
// stops already in flight on the node (stopsInFlight.yield).
var TeardownYield = 5 * time.Second

// stopsInFlight lets a pod's teardown yield to the container stops in
// flight on the node. When many pods are deleted at once, the runtime
// records container exits one after the other (containerd's CRI handles
// its task exits in one loop), and a sandbox stop adds the pause
// container's exit to that queue and competes for the same CPU; the
// containers of the pods still stopping would be seen stopped later. So
// KillPod stops its sandboxes, and RemovePod removes anything, only once
// the stops that were in flight when it got there have returned, or after
// TeardownYield. A teardown waits only for the stops that began before it,
// so steady churn never starves it, and a container that uses its whole
// grace period holds the other pods' teardowns at most TeardownYield.
type stopsInFlight struct {
	mu    sync.Mutex
	calls map[chan struct{}]struct{} // each closed when its stop ends
}

// begin records a stop in flight; the returned func ends it.
func (s *stopsInFlight) begin() (end func()) {
	done := make(chan struct{})
	s.mu.Lock()
	if s.calls == nil {
		s.calls = make(map[chan struct{}]struct{})
	}
	s.calls[done] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.calls, done)
		s.mu.Unlock()
		close(done)
	}
}

// yield waits until every stop in flight at the call has ended, at most
// for max on clock's time; it returns early with ctx's error.
func (s *stopsInFlight) yield(ctx context.Context, after func(time.Duration) <-chan time.Time, max time.Duration) error {
	s.mu.Lock()
	pending := make([]chan struct{}, 0, len(s.calls))
	for done := range s.calls {
		pending = append(pending, done)
	}
	s.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	timeout := after(max)
	for _, done := range pending {
		select {
		case <-done:
		case <-timeout:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
