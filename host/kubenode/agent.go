package kubenode

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// Agent keeps one Node, its status and its Lease in the API server.
type Agent struct {
	o          Options
	m          machine
	metrics    metrics
	rand       func() float64
	registered chan struct{}
	running    atomic.Bool
	// podEvents is the recorder of pod events, and of the node's events
	// from other goroutines (NodeEvent), once Run set it up.
	podEvents atomic.Pointer[record.EventRecorder]

	mu   sync.Mutex
	node *v1.Node // the Node as last written or read; nil before registration

	// Set before the loops start, or used by the status loop only.
	info           v1.NodeSystemInfo // without the versions
	capacity       v1.ResourceList   // measured; nil until a measurement succeeds
	runtimeVersion string
}

// New checks opts and returns an Agent; no API call is made until Run.
func New(opts Options) (*Agent, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	a := &Agent{o: o, m: hostMachine(), rand: rand.Float64, registered: make(chan struct{})}
	if a.metrics, err = newMetrics(o.Registry); err != nil {
		return nil, err
	}
	return a, nil
}

// Run registers the Node, then renews its Lease and keeps its status until
// ctx ends, and returns ctx.Err(). API errors are retried, never returned.
// Run may be called once.
func (a *Agent) Run(ctx context.Context) error {
	if !a.running.CompareAndSwap(false, true) {
		return errors.New("kubenode: Run was called already")
	}
	a.info = a.m.systemInfo()
	if a.o.Recorder == nil {
		stop := a.recordToAPIServer()
		defer stop()
	}
	rec := a.o.Recorder
	a.podEvents.Store(&rec)
	defer a.podEvents.Store(nil)
	a.recordStarting()
	st := &statusLoop{a: a, report: reportPolicy{frequency: a.o.ReportFrequency, rand: a.rand},
		hb: heartbeat{interval: a.o.StatusFrequency, rand: a.rand}}
	if err := st.register(ctx); err != nil {
		return err
	}
	close(a.registered)
	var wg sync.WaitGroup
	wg.Go(func() { a.leaseLoop(ctx) })
	st.run(ctx)
	wg.Wait()
	return ctx.Err()
}

// Registered is closed once the Node is registered.
func (a *Agent) Registered() <-chan struct{} { return a.registered }

// Node returns a copy of the Node as the agent last wrote or read it, with
// what others set (labels, taints): for matching pods against the node.
// Nil before registration.
func (a *Agent) Node() *v1.Node {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.node.DeepCopy()
}

func (a *Agent) setNode(n *v1.Node) {
	a.mu.Lock()
	a.node = n.DeepCopy()
	a.mu.Unlock()
}

func (a *Agent) nodeUID() types.UID {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.node == nil {
		return ""
	}
	return a.node.UID
}

// observe measures what the agent owns on the Node. What cannot be
// measured is logged and left out (a missing capacity makes the node not
// Ready) or kept from before (the runtime version).
func (a *Agent) observe(ctx context.Context) observed {
	ctx, cancel := context.WithTimeout(ctx, a.callTimeout())
	defer cancel()
	o := observed{
		labels:           nodeLabels(hostnameOf(a.o.Addresses, a.o.NodeName), a.o.Labels),
		addresses:        a.o.Addresses,
		daemonPort:       a.o.DaemonPort,
		declaredFeatures: a.o.DeclaredFeatures,
	}
	if rv, err := a.o.RuntimeVersion(ctx); err != nil {
		a.o.Logger.Debug("reading the container runtime's version", "err", err)
	} else {
		a.runtimeVersion = rv
	}
	o.info = a.info
	o.info.ContainerRuntimeVersion = a.runtimeVersion
	o.info.KubeletVersion = a.o.KubeletVersion
	o.capacity, o.allocatable = a.resources()
	if a.o.VolumesInUse != nil {
		o.volumesInUse, o.volumesKnown = a.o.VolumesInUse()
	}
	if a.o.Health != nil {
		o.health = a.o.Health(ctx)
	} else {
		o.health = a.machineHealth(ctx)
	}
	return o
}

// resources is Options.Capacity and Allocatable, measuring the machine
// for what is nil; a failed measurement is tried again next round.
func (a *Agent) resources() (capacity, alloc v1.ResourceList) {
	capacity = a.o.Capacity
	if capacity == nil {
		if a.capacity == nil {
			c, err := a.m.capacity(a.o.RootDir, a.o.MaxPods)
			if err != nil {
				a.o.Logger.Warn("measuring the node's capacity", "node", a.o.NodeName, "err", err)
			}
			a.capacity = c
		}
		capacity = a.capacity
	}
	if alloc = a.o.Allocatable; alloc == nil {
		alloc = allocatable(capacity, a.o.Thresholds)
	}
	return capacity, alloc
}

// machineHealth is the default health: RuntimeReady and the machine's
// pressure.
func (a *Agent) machineHealth(ctx context.Context) Health {
	h, err := a.m.pressure(a.o.RootDir, a.o.Thresholds)
	if err != nil {
		a.o.Logger.Debug("measuring the node's pressure", "err", err)
	}
	if a.o.Pressure != nil {
		h.MemoryPressure, h.DiskPressure = a.o.Pressure()
	}
	if err := a.o.RuntimeReady(ctx); err != nil {
		h.NotReady = append(h.NotReady, "container runtime not ready: "+err.Error())
	}
	return h
}

// callTimeout bounds one round of API calls (a renewal, a status post, a
// registration attempt) and the health and version probes, so that a hung
// API server or plugin delays the next heartbeat by at most this long, as
// the kubelet's heartbeat client timeout does.
func (a *Agent) callTimeout() time.Duration { return max(a.o.RenewInterval, a.o.StatusFrequency) }

// sleep waits d on the agent's clock; false if ctx ended first.
func (a *Agent) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := a.o.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// result counts and logs a heartbeat's result (what is heartbeatLease,
// heartbeatStatus or heartbeatRegister) and says when to try next.
func (a *Agent) result(ctx context.Context, hb *heartbeat, what string, err error) outcome {
	if err == nil {
		o := hb.succeeded()
		if o.recovered {
			a.o.Logger.Info("API server back: node heartbeat written", "node", a.o.NodeName, "heartbeat", what,
				"failures", o.failures, "since", o.since.Format(time.RFC3339), "down", a.o.Clock.Since(o.since).Round(time.Millisecond))
		}
		return o
	}
	if ctx.Err() != nil {
		return outcome{}
	}
	a.metrics.failures.WithLabelValues(what).Inc()
	o := hb.failed(a.o.Clock.Now())
	switch {
	case o.started:
		a.o.Logger.Warn("node heartbeat failed; retrying", "node", a.o.NodeName, "heartbeat", what, "err", err, "retry_in", o.next)
	case o.remind:
		a.o.Logger.Warn("node heartbeat still failing", "node", a.o.NodeName, "heartbeat", what, "since", o.since.Format(time.RFC3339),
			"failures", o.failures, "err", err)
	}
	return o
}
