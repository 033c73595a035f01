package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// phaseResult is what one phase measured over its window.
type phaseResult struct {
	cpu cpuUse
	// execs are the execution times of each target within the window.
	execs [][]time.Time
	// calls and failures count the ExecSync calls (direct) or probes
	// (podhost, from prober_probe_total) within the window; failures are
	// errors, timeouts and non-zero exits.
	calls, failures int
}

// measure waits out the warmup, then samples the CPU and, with counts,
// the call counters at both ends of the window, and reads the
// executions of the window.
func (b *bench) measure(ctx context.Context, ts []*target, counts func() (calls, failures int, err error)) (*phaseResult, error) {
	if err := sleep(ctx, b.o.warmup); err != nil {
		return nil, err
	}
	c0, f0, err := counts()
	if err != nil {
		return nil, err
	}
	s0, err := b.sampleCPU()
	if err != nil {
		return nil, err
	}
	if err := sleep(ctx, b.o.window); err != nil {
		return nil, err
	}
	s1, err := b.sampleCPU()
	if err != nil {
		return nil, err
	}
	c1, f1, err := counts()
	if err != nil {
		return nil, err
	}
	execs, err := executions(ts, s0.at, s1.at)
	if err != nil {
		return nil, err
	}
	return &phaseResult{cpu: s1.since(s0), execs: execs, calls: c1 - c0, failures: f1 - f0}, nil
}

// directPhase runs the pods without probes and calls ExecSync in every
// container every period itself, each container's loop on its own ticker.
// The loops of a pod's containers start together, at a random offset
// within the first period, as the host starts a pod's probe workers
// together.
func (b *bench) directPhase(ctx context.Context) (*phaseResult, error) {
	ts := b.targets("direct")
	if err := b.applyAndWait(ctx, ts, false); err != nil {
		return nil, err
	}
	var calls, failures atomic.Int64
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	offsets := map[string]time.Duration{}
	for _, pod := range podNames(ts) {
		offsets[pod] = rand.N(b.o.period)
	}
	start := time.Now()
	for _, t := range ts {
		wg.Go(func() {
			if sleep(lctx, time.Until(start.Add(offsets[t.pod]))) != nil {
				return
			}
			tick := time.NewTicker(b.o.period)
			defer tick.Stop()
			for {
				resp, err := b.ctrd.Runtime.ExecSync(lctx, &runtimeapi.ExecSyncRequest{ContainerId: t.id, Cmd: probeCommand, Timeout: 1})
				if lctx.Err() != nil {
					return
				}
				calls.Add(1)
				if err != nil || resp.GetExitCode() != 0 {
					failures.Add(1)
				}
				select {
				case <-lctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
	res, err := b.measure(ctx, ts, func() (int, int, error) { return int(calls.Load()), int(failures.Load()), nil })
	stop()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	return res, b.deleteAndWait(ctx, ts)
}

// hostPhase runs the pods with the exec readiness probe and lets the host
// probe them.
func (b *bench) hostPhase(ctx context.Context) (*phaseResult, error) {
	ts := b.targets("podhost")
	if err := b.applyAndWait(ctx, ts, true); err != nil {
		return nil, err
	}
	res, err := b.measure(ctx, ts, func() (int, int, error) {
		c, err := b.probeCounts(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("probe counts: %w", err)
		}
		n := c["successful"] + c["failed"] + c["unknown"]
		return int(n), int(c["failed"] + c["unknown"]), nil
	})
	if err != nil {
		return nil, err
	}
	return res, b.deleteAndWait(ctx, ts)
}
