package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/podhost/podhost/bench/internal/hostproc"
)

// With -usage the harness samples CPU and RSS of the host, the runtime
// plugin and containerd twice in one run: idle, before the first pod
// exists, and with -n pods running at rest after the other phases. The
// difference is what the pods cost at rest; the goals are below (and in
// BENCHMARKS.md).

// Goals of the at-rest phase (for 50 pods).
const (
	goalCPUOverIdle = 0.2 // plugin + containerd, percent of one core over idle
	goalRSSMiB      = 48  // host + plugin
	goalPods        = 50
)

// usageProcs are the processes of the table, in order.
var usageProcs = []string{"host", "runtime-containerd", "containerd"}

// usageResult is the idle and the at-rest sample.
type usageResult struct {
	window       time.Duration
	pods         int
	idle, atRest hostproc.Usage
	shims        int // shims sampled at rest (summed into one row)
}

func (b *bench) usagePIDs() map[string]int {
	return map[string]int{"host": b.host.PID(), "runtime-containerd": b.host.PluginPID(), "containerd": b.ctrd.PID()}
}

// settle waits d, or less when ctx ends.
func settle(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// idleUsage samples the processes before any pod exists.
func (b *bench) idleUsage(ctx context.Context) (hostproc.Usage, error) {
	fmt.Fprintf(os.Stderr, "podstart: idle, %s to settle, then %s of CPU\n", b.o.usageSettle, b.o.usageWindow)
	if err := settle(ctx, b.o.usageSettle); err != nil {
		return hostproc.Usage{}, err
	}
	return hostproc.Measure(ctx, b.o.usageWindow, b.usagePIDs())
}

// restUsage runs -n pods at once, waits until all run, settles, samples
// the processes (and the pods' shims) and deletes the pods.
func (b *bench) restUsage(ctx context.Context, idle hostproc.Usage) (*usageResult, error) {
	r := &usageResult{window: b.o.usageWindow, pods: b.o.pods, idle: idle}
	_, err := b.hostPhaseWith(ctx, "usage", true, func() error {
		fmt.Fprintf(os.Stderr, "podstart: %d pods running, %s to settle, then %s of CPU\n", b.o.pods, b.o.usageSettle, b.o.usageWindow)
		if err := settle(ctx, b.o.usageSettle); err != nil {
			return err
		}
		pids := b.usagePIDs()
		shims, err := b.ctrd.Shims()
		if err != nil {
			return fmt.Errorf("shims: %w", err)
		}
		for _, pid := range shims {
			pids[fmt.Sprintf("shim %d", pid)] = pid
		}
		r.shims = len(shims)
		r.atRest, err = hostproc.Measure(ctx, b.o.usageWindow, pids)
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// table prints CPU and RSS per process, idle and at rest, and the two
// goal lines.
func (r *usageResult) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nAt rest: CPU over %s (%% of one core) and RSS at its end (in parentheses its anonymous part, RssAnon), idle (no pod yet) and with %d pods running (after the other phases):\n\n", r.window, r.pods)
	fmt.Fprintf(&b, "| process | CPU idle | CPU with %d pods | over idle | RSS idle | RSS with %d pods |\n|---|---|---|---|---|---|\n", r.pods, r.pods)
	for _, p := range usageProcs {
		fmt.Fprintf(&b, "| %s | %.2f %% | %.2f %% | %+.2f %% | %.1f (%.1f) MiB | %.1f (%.1f) MiB |\n", p,
			r.idle.CPU[p], r.atRest.CPU[p], r.atRest.CPU[p]-r.idle.CPU[p], r.idle.RSS[p], r.idle.Anon[p], r.atRest.RSS[p], r.atRest.Anon[p])
	}
	var shimCPU, shimRSS float64
	for name, v := range r.atRest.CPU {
		if strings.HasPrefix(name, "shim ") {
			shimCPU += v
			shimRSS += r.atRest.RSS[name]
		}
	}
	fmt.Fprintf(&b, "| (info) %d containerd shims, summed | – | %.2f %% | – | – | %.1f MiB |\n", r.shims, shimCPU, shimRSS)

	over := r.atRest.CPU["runtime-containerd"] + r.atRest.CPU["containerd"] - r.idle.CPU["runtime-containerd"] - r.idle.CPU["containerd"]
	rss := r.atRest.RSS["host"] + r.atRest.RSS["runtime-containerd"]
	anon := r.atRest.Anon["host"] + r.atRest.Anon["runtime-containerd"]
	note := ""
	if r.pods != goalPods {
		note = fmt.Sprintf(" (the goals are for %d pods; this run has %d)", goalPods, r.pods)
	}
	fmt.Fprintf(&b, "\nplugin + containerd over idle, %d pods: %.2f %% of one core; goal ≤ %.1f %%: %s%s.\n", r.pods, over, goalCPUOverIdle, verdict(over <= goalCPUOverIdle), note)
	fmt.Fprintf(&b, "host + plugin RSS, %d pods: %.1f MiB (%.1f MiB anonymous); goal ≤ %d MiB: %s%s.\n", r.pods, rss, anon, goalRSSMiB, verdict(rss <= goalRSSMiB), note)
	return b.String()
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "**not met**"
}
