package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/podhost/podhost/test/criproxy"
)

// With -calls the runtime plugin talks to containerd through a counting
// proxy (test/criproxy), CRI and containerd's event service alike; the
// floor and the harness's own CRI polls go straight to containerd, so the
// counts are the plugin's alone.

// floorCalls are the CRI calls of one pod lifecycle at the floor.
var floorCalls = []string{"RunPodSandbox", "CreateContainer", "StartContainer", "StopContainer", "RemoveContainer", "StopPodSandbox", "RemovePodSandbox"}

// eventMethods are containerd's event service, not CRI.
var eventMethods = map[string]bool{"Subscribe": true, "Publish": true, "Forward": true}

// callCounts are calls per method over a window.
type callCounts struct {
	calls  map[string]int
	window time.Duration
}

// counter snapshots the proxy's counts; nil without -calls.
type counter struct{ proxy *criproxy.Proxy }

func (c *counter) reset() time.Time {
	if c == nil {
		return time.Time{}
	}
	c.proxy.Reset()
	return time.Now()
}

func (c *counter) since(t0 time.Time) *callCounts {
	if c == nil {
		return nil
	}
	return &callCounts{calls: c.proxy.Calls(), window: time.Since(t0)}
}

// restCalls leaves n pods running idle for the window and counts what the
// plugin asks of containerd meanwhile.
func (b *bench) restCalls(ctx context.Context, window time.Duration) (*callCounts, error) {
	var rest *callCounts
	_, err := b.hostPhaseWith(ctx, "rest", true, func() error {
		// Let the last status writes and relists after the starts settle.
		time.Sleep(2 * time.Second)
		t0 := b.calls.reset()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(window):
		}
		rest = b.calls.since(t0)
		return nil
	})
	return rest, err
}

// callTable prints CRI calls per pod lifecycle by method, for the two host
// phases, next to the floor's, and the calls per minute at rest.
func (r *report) callTable() string {
	if r.hostSeq.calls == nil {
		return ""
	}
	methods := map[string]bool{}
	for _, m := range floorCalls {
		methods[m] = true
	}
	for _, cc := range []*callCounts{r.hostSeq.calls, r.hostPar.calls, r.rest} {
		for m := range cc.calls {
			methods[m] = true
		}
	}
	names := slices.Sorted(maps.Keys(methods))
	// CRI first, the event service after.
	slices.SortStableFunc(names, func(a, b string) int {
		switch {
		case eventMethods[a] == eventMethods[b]:
			return 0
		case eventMethods[a]:
			return 1
		}
		return -1
	})
	perPod := func(cc *callCounts, m string) float64 { return float64(cc.calls[m]) / float64(r.pods) }
	perMin := func(cc *callCounts, m string) float64 { return float64(cc.calls[m]) / cc.window.Minutes() }

	var b strings.Builder
	fmt.Fprintf(&b, "\nCalls from runtime-containerd to containerd (test/criproxy), per pod lifecycle (apply → Running → delete → gone, %d pods a phase; the phase's background included), and at rest with %d pods idle for %s:\n\n",
		r.pods, r.pods, r.rest.window.Round(time.Second))
	b.WriteString("| method | floor per pod | host one by one, per pod | host at once, per pod | at rest, per minute |\n|---|---|---|---|---|\n")
	var totals [4]float64
	for _, m := range names {
		fl := 0.0
		if slices.Contains(floorCalls, m) {
			fl = 1
		}
		row := [4]float64{fl, perPod(r.hostSeq.calls, m), perPod(r.hostPar.calls, m), perMin(r.rest, m)}
		name := m
		if eventMethods[m] {
			name += " (containerd events)"
		} else {
			for i, v := range row {
				totals[i] += v
			}
		}
		fmt.Fprintf(&b, "| %s | %.0f | %.2f | %.2f | %.1f |\n", name, row[0], row[1], row[2], row[3])
	}
	fmt.Fprintf(&b, "| **CRI total** | %.0f | %.2f (%.1f× floor) | %.2f (%.1f× floor) | %.1f |\n",
		totals[0], totals[1], totals[1]/totals[0], totals[2], totals[2]/totals[0], totals[3])
	fmt.Fprintf(&b, "\nPhase windows: one by one %s, at once %s. The at-rest rate over those windows would be %.2f and %.2f CRI calls per pod (an upper bound: fewer pods are up for most of a phase).\n",
		r.hostSeq.calls.window.Round(time.Millisecond), r.hostPar.calls.window.Round(time.Millisecond),
		totals[3]*r.hostSeq.calls.window.Minutes()/float64(r.pods), totals[3]*r.hostPar.calls.window.Minutes()/float64(r.pods))
	return b.String()
}
