package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/podhost/podhost/bench/internal/floor"
	"github.com/podhost/podhost/bench/internal/stats"
)

type report struct {
	pods  int
	floor []*floor.Results
	node  []*phaseResult
}

func (r *report) nodeDurations(from, to func(*nodePod) time.Time) []time.Duration {
	var ds []time.Duration
	for _, ph := range r.node {
		for _, p := range ph.pods {
			if a, b := from(p), to(p); !a.IsZero() && !b.IsZero() {
				ds = append(ds, b.Sub(a))
			}
		}
	}
	return ds
}

func (r *report) floorDurations(get func(*floor.Pod) time.Duration) []time.Duration {
	var ds []time.Duration
	for _, res := range r.floor {
		ds = append(ds, res.Durations(get)...)
	}
	return ds
}

// The table's rows: the two goals (BENCHMARKS.md, "Pods through a real API
// server against the CRI floor"), and one for information.
var rows = []struct {
	name     string
	from, to func(*nodePod) time.Time
	floor    func(*floor.Pod) time.Duration
	times    float64 // goal: node ≤ times × floor at p50 and p90; 0 for none
}{
	{"create → Running (API watch) vs RunPodSandbox → StartContainer returned",
		func(p *nodePod) time.Time { return p.created }, func(p *nodePod) time.Time { return p.running }, floor.StartTime, 1.3},
	{"delete → gone from the API (watch DELETED) vs StopContainer(5 s) + StopPodSandbox + RemovePodSandbox",
		func(p *nodePod) time.Time { return p.deleted }, func(p *nodePod) time.Time { return p.gone }, floor.StopTeardownTime, 1.5},
	{"(info) delete → gone from the API vs StopContainer(5 s) alone",
		func(p *nodePod) time.Time { return p.deleted }, func(p *nodePod) time.Time { return p.gone }, floor.StopTime, 0},
}

func (r *report) table() string {
	var b strings.Builder
	b.WriteString("| measure | pods | node p50 / p90 | floor p50 / p90 | node ÷ floor p50 / p90 | goal | met p50 / p90 |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	want := r.pods * len(r.node)
	for _, rw := range rows {
		n := stats.Summarize(r.nodeDurations(rw.from, rw.to))
		f := stats.Summarize(r.floorDurations(rw.floor))
		goal, met := "–", "–"
		if rw.times > 0 {
			goal = fmt.Sprintf("≤ %.1f× floor (%s / %s)", rw.times, stats.MS(scale(f.P50, rw.times)), stats.MS(scale(f.P90, rw.times)))
			met = yesNo(n.P50 <= scale(f.P50, rw.times)) + " / " + yesNo(n.P90 <= scale(f.P90, rw.times))
		}
		count := fmt.Sprint(n.N)
		if n.N != want {
			count = fmt.Sprintf("%d of %d", n.N, want)
		}
		fmt.Fprintf(&b, "| %d at once: %s | %s | %s / %s ms | %s / %s ms | %s / %s | %s | %s |\n",
			r.pods, rw.name, count, stats.MSNum(n.P50), stats.MSNum(n.P90), stats.MSNum(f.P50), stats.MSNum(f.P90),
			ratio(n.P50, f.P50), ratio(n.P90, f.P90), goal, met)
	}
	walls := make([]string, len(r.node))
	for i, ph := range r.node {
		walls[i] = fmt.Sprintf("round %d %s / %s", i+1, ph.startWall.Round(time.Millisecond), ph.delWall.Round(time.Millisecond))
	}
	fmt.Fprintf(&b, "\nWall time, all created → all Running / all deleted → all gone: %s.\n", strings.Join(walls, "; "))
	for _, res := range r.floor {
		b.WriteString(res.StopErrors())
	}
	return b.String()
}

func scale(d time.Duration, f float64) time.Duration { return time.Duration(float64(d) * f) }

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}
