package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/podhost/podhost/bench/internal/stats"
)

// report holds both phases.
type report struct {
	o            options
	direct, host *phaseResult
}

// cpuText formats a CPU time over the window: ms, share of one core, and
// ms per execution.
func cpuText(d, window time.Duration, execs int) string {
	per := "–"
	if execs > 0 {
		per = fmt.Sprintf("%.2f ms per execution", float64(d)/float64(time.Millisecond)/float64(execs))
	}
	return fmt.Sprintf("%s (%.1f %% of a core), %s", stats.MS(d), 100*float64(d)/float64(window), per)
}

func count(execs [][]time.Time) int {
	n := 0
	for _, e := range execs {
		n += len(e)
	}
	return n
}

// table renders the markdown table of the two phases.
func (r *report) table() string {
	d, h := r.direct, r.host
	dn, hn := count(d.execs), count(h.execs)
	expected := r.o.pods * r.o.containers * int(r.o.window/r.o.period)
	dIv, hIv := intervals(d.execs), intervals(h.execs)
	dDev, hDev := stats.Summarize(deviations(dIv, r.o.period)), stats.Summarize(deviations(hIv, r.o.period))
	dSum, hSum := stats.Summarize(dIv), stats.Summarize(hIv)
	quad := func(s stats.Summary) string { return fmt.Sprintf("%s / %s", s.Quartet(), stats.MSNum(s.Max)) }
	probing := (h.cpu.host + h.cpu.plugin) - (d.cpu.host + d.cpu.plugin)

	var b strings.Builder
	row := func(cells ...string) { fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | ")) }
	row("measure", "direct ExecSync (the harness)", "exec probes through podhost")
	row("---", "---", "---")
	row(fmt.Sprintf("executions in the window (%d expected)", expected), fmt.Sprint(dn), fmt.Sprint(hn))
	row("calls / failed (error, timeout, exit ≠ 0)", fmt.Sprintf("%d / %d", d.calls, d.failures), fmt.Sprintf("%d / %d (prober_probe_total)", h.calls, h.failures))
	row("interval between executions, p50 / p75 / p90 / p99 / max, ms", quad(dSum), quad(hSum))
	row(fmt.Sprintf("deviation from the %s period, p50 / p75 / p90 / p99 / max, ms", r.o.period), quad(dDev), quad(hDev))
	row("CPU of the caller (harness; podhost: host + runtime plugin)", cpuText(d.cpu.harness, d.cpu.window, dn), cpuText(h.cpu.host+h.cpu.plugin, h.cpu.window, hn))
	row("podhost CPU for probing (host + plugin, less their CPU in the direct phase)", "–", cpuText(probing, h.cpu.window, hn))
	row("└ host process", cpuText(d.cpu.host, d.cpu.window, 0), cpuText(h.cpu.host, h.cpu.window, hn))
	row("└ runtime plugin", cpuText(d.cpu.plugin, d.cpu.window, 0), cpuText(h.cpu.plugin, h.cpu.window, hn))
	row("harness", cpuText(d.cpu.harness, d.cpu.window, dn), cpuText(h.cpu.harness, h.cpu.window, 0))
	row("containerd", cpuText(d.cpu.runtime, d.cpu.window, dn), cpuText(h.cpu.runtime, h.cpu.window, hn))
	row("shims, with runc and the commands", cpuText(d.cpu.shims, d.cpu.window, dn), cpuText(h.cpu.shims, h.cpu.window, hn))
	b.WriteString("\nExecution times are the times of the files the command left (the kernel's coarse clock, a few ms); CPU from /proc/<pid>/stat (10 ms ticks).\n")
	return b.String()
}
