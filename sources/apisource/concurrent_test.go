package apisource

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// gatedPersister holds every Write until `want` of them are in flight, so
// that it proves the writes of concurrent applies overlap (none is made
// under a lock the others wait for). After the deadline it lets writes
// through, and the test fails on the count it saw.
type gatedPersister struct {
	MemoryPersister
	want     int
	mu       sync.Mutex
	inFlight int
	most     int
	open     chan struct{}
}

func (g *gatedPersister) Write(ctx context.Context, c Change) error {
	g.mu.Lock()
	g.inFlight++
	g.most = max(g.most, g.inFlight)
	if g.inFlight == g.want {
		close(g.open)
	}
	g.mu.Unlock()
	select {
	case <-g.open:
	case <-time.After(5 * time.Second):
	}
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
	return g.MemoryPersister.Write(ctx, c)
}

// TestConcurrentAppliesOverlapAndSurvive applies n pods at once: their
// writes run together, and a new source over the same store (a restart)
// finds every pod whose apply was answered.
func TestConcurrentAppliesOverlapAndSurvive(t *testing.T) {
	const n = 8
	p := &gatedPersister{want: n, open: make(chan struct{})}
	s := newTestSource(t, p)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, _, errs[i] = s.Apply(t.Context(), "request", []byte(podYAML(fmt.Sprintf("p%d", i), "x:1")))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("apply %d: %v", i, err)
		}
	}
	if p.most != n {
		t.Errorf("at most %d writes were in flight at once; want all %d", p.most, n)
	}
	restarted := newTestSource(t, &p.MemoryPersister)
	if got := len(restarted.List()); got != n {
		t.Errorf("after restart: %d pods; want %d", got, n)
	}
	for i := range n {
		if _, ok := restarted.Get("default", fmt.Sprintf("p%d", i)); !ok {
			t.Errorf("after restart: pod p%d lost although its apply was answered", i)
		}
	}
}
