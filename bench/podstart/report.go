package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/podhost/podhost/bench/internal/floor"
	"github.com/podhost/podhost/bench/internal/stats"
)

type report struct {
	pods               int
	floorSeq, floorPar *floor.Results
	hostSeq, hostPar   *hostResults
	rest               *callCounts  // with -calls
	usage              *usageResult // with -usage
	exits              []*exitPod   // with -exits
}

// goal is a p50 target relative to the floor's p50 (or absolute).
type goal struct {
	plus  time.Duration // floor + plus, when factor is 0
	times float64       // floor × times
	abs   time.Duration // absolute, when set
}

func (g *goal) limit(floorP50 time.Duration) time.Duration {
	switch {
	case g.abs > 0:
		return g.abs
	case g.times > 0:
		return time.Duration(float64(floorP50) * g.times)
	default:
		return floorP50 + g.plus
	}
}

func (g *goal) String() string {
	switch {
	case g.abs > 0:
		return "≤ " + stats.MS(g.abs)
	case g.times > 0:
		return fmt.Sprintf("≤ %.1f× floor", g.times)
	default:
		return "≤ floor + " + stats.MS(g.plus)
	}
}

var (
	applied  = func(p *hostPod) time.Time { return p.applied }
	answered = func(p *hostPod) time.Time { return p.answered }
	running  = func(p *hostPod) time.Time { return p.running }
	deleted  = func(p *hostPod) time.Time { return p.deleted }
	stopped  = func(p *hostPod) time.Time { return p.stopped }
	finished = func(p *hostPod) time.Time { return p.finished }
	removed  = func(p *hostPod) time.Time { return p.removed }
	apiGone  = func(p *hostPod) time.Time { return p.apiGone }
)

func (r *report) table() string {
	var b strings.Builder
	b.WriteString("| measure | pods | host p50 / p75 / p90 / p99 | floor p50 / p75 / p90 / p99 | p50 host − floor | p50 host ÷ floor | goal at p50 | met |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	type row struct {
		name     string
		from, to func(*hostPod) time.Time
		floor    func(*floor.Pod) time.Duration
		seq, par *goal
	}
	rows := []row{
		{"apply → Running (host watch) vs RunPodSandbox → StartContainer returned", applied, running, floor.StartTime,
			&goal{plus: 50 * time.Millisecond}, &goal{times: 1.2}},
		{"(info) apply → the local API answered (pod stored) vs RunPodSandbox alone", applied, answered, floor.SandboxTime, nil, nil},
		{"delete → containers stopped (CRI poll) vs StopContainer(5 s) returned", deleted, stopped, floor.StopTime,
			&goal{plus: 100 * time.Millisecond}, &goal{times: 1.3}},
		{"delete → sandbox removed (CRI poll) vs StopContainer + StopPodSandbox + RemovePodSandbox", deleted, removed, floor.StopTeardownTime, nil, nil},
		{"sandbox removed after containers stopped vs StopPodSandbox + RemovePodSandbox", stopped, removed, floor.TeardownTime,
			&goal{abs: time.Second}, &goal{abs: time.Second}},
		{"(info) delete → container exited, containerd's finishedAt", deleted, finished, floor.StopTime, nil, nil},
		{"(info) delete → pod gone from the host API (watch DELETED)", deleted, apiGone, floor.StopTeardownTime, nil, nil},
	}
	for _, mode := range []struct {
		name string
		host *hostResults
		fl   *floor.Results
		seq  bool
	}{{"one by one", r.hostSeq, r.floorSeq, true}, {fmt.Sprintf("%d at once", r.pods), r.hostPar, r.floorPar, false}} {
		for _, rw := range rows {
			h := stats.Summarize(mode.host.durations(rw.from, rw.to))
			f := stats.Summarize(mode.fl.Durations(rw.floor))
			g := rw.par
			if mode.seq {
				g = rw.seq
			}
			goalText, met := "–", "–"
			if g != nil {
				lim := g.limit(f.P50)
				goalText = fmt.Sprintf("%s (%s)", g, stats.MS(lim))
				met = "**no**"
				if h.P50 <= lim {
					met = "yes"
				}
			}
			ratio := "–"
			if f.P50 > 0 {
				ratio = fmt.Sprintf("%.2f×", float64(h.P50)/float64(f.P50))
			}
			n := fmt.Sprintf("%d", h.N)
			if h.N != r.pods {
				n = fmt.Sprintf("%d of %d", h.N, r.pods)
			}
			fmt.Fprintf(&b, "| %s: %s | %s | %s ms | %s ms | %+.0f ms | %s | %s | %s |\n",
				mode.name, rw.name, n, h.Quartet(), f.Quartet(),
				float64(h.P50-f.P50)/float64(time.Millisecond), ratio, goalText, met)
		}
	}
	fmt.Fprintf(&b, "\nWall time: host one by one start %s / delete %s; host %d at once start %s / delete %s.\n",
		r.hostSeq.startWall.Round(time.Millisecond), r.hostSeq.delWall.Round(time.Millisecond), r.pods,
		r.hostPar.startWall.Round(time.Millisecond), r.hostPar.delWall.Round(time.Millisecond))
	for _, s := range []struct {
		mode string
		h    *hostResults
	}{{"one by one", r.hostSeq}, {"at once", r.hostPar}} {
		st := stats.Summarize(s.h.durations(stopped, removed))
		fmt.Fprintf(&b, "Sandbox removed after containers stopped, %s: p50 %s, p99 %s, max %s.\n", s.mode, stats.MS(st.P50), stats.MS(st.P99), stats.MS(st.Max))
	}
	b.WriteString(r.floorSeq.StopErrors())
	b.WriteString(r.floorPar.StopErrors())
	b.WriteString(r.callTable())
	if r.usage != nil {
		b.WriteString(r.usage.table())
	}
	if r.exits != nil {
		b.WriteString(exitsTable(r.exits))
	}
	return b.String()
}
