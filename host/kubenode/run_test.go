package kubenode

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// TestRunOnTheClock drives Run with the injected clock over a fake
// clientset: the Lease is created at once and renewed every 10 s; failed
// renewals retry after 200 ms, 400 ms, 800 ms; the status is posted when
// the runtime stops being ready, at the next 10 s round. Each step waits,
// with a deadline, until both loops wait on the clock again.
func TestRunOnTheClock(t *testing.T) {
	a, cs, clk := fakeAgent(t)
	a.rand = func() float64 { return 0 }
	var failUpdates atomic.Int32
	cs.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if failUpdates.Load() > 0 {
			failUpdates.Add(-1)
			return true, nil, apierrors.NewInternalError(errors.New("etcd is away"))
		}
		return false, nil, nil
	})
	notReady := runAgent(t, a)

	failures := a.metrics.failures.WithLabelValues(heartbeatLease)
	settle := func(what string, ok func() bool) {
		t.Helper()
		end := time.Now().Add(10 * time.Second)
		for !(ok() && clk.Waiters() == 2) {
			if time.Now().After(end) {
				t.Fatalf("%s: not reached; %d waiters, actions %v", what, clk.Waiters(), cs.Actions())
			}
			time.Sleep(time.Millisecond)
		}
	}
	leaseActions := func(verb string) int { return countActions(cs, verb, "leases") }

	settle("registered, lease created", func() bool { return leaseActions("create") == 1 })
	clk.Step(10 * time.Second)
	settle("renewed at 10 s", func() bool { return leaseActions("update") == 1 })

	failUpdates.Store(3)
	for i, wait := range []time.Duration{10 * time.Second, 200 * time.Millisecond, 400 * time.Millisecond} {
		clk.Step(wait)
		settle("a failed renewal", func() bool { return testutil.ToFloat64(failures) == float64(i+1) })
	}
	clk.Step(800 * time.Millisecond)
	settle("renewed after 800 ms", func() bool { return testutil.ToFloat64(a.metrics.leaseRenewals) == 3 })

	if n := countActions(cs, "patch", "nodes"); n != 0 {
		t.Errorf("%d status patches with nothing changed; want 0", n)
	}
	notReady.Store(true)
	clk.Step(10*time.Second - 1400*time.Millisecond) // to the status round at 30 s
	settle("NotReady posted", func() bool { return countActions(cs, "patch", "nodes") == 1 })
	n, err := cs.CoreV1().Nodes().Get(t.Context(), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := findCondition(n, v1.NodeReady); c == nil || c.Status != v1.ConditionFalse || c.Reason != ReasonNotReady ||
		!c.LastTransitionTime.Time.Equal(clk.Now()) {
		t.Errorf("Ready condition %+v; want False/%s since %v", c, ReasonNotReady, clk.Now())
	}
}

// runAgent runs the agent until the test ends, with a runtime that is
// ready until the returned flag is set.
func runAgent(t *testing.T, a *Agent) *atomic.Bool {
	t.Helper()
	notReady := &atomic.Bool{}
	a.o.RuntimeReady = func(context.Context) error {
		if notReady.Load() {
			return errors.New("plugin exited")
		}
		return nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	})
	return notReady
}
