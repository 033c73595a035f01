package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times on Linux.
const clockTicks = 100

// cpuTime is a process's CPU time from /proc/<pid>/stat: utime+stime, and
// with children cutime+cstime of its reaped children as well.
func cpuTime(pid int, children bool) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseCPU(string(b), children)
}

// parseCPU reads the CPU fields of a /proc/<pid>/stat line. The command
// in parentheses may hold spaces, so fields count from its closing one:
// state is field 3, utime 14, stime 15, cutime 16, cstime 17.
func parseCPU(stat string, children bool) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 15 {
		return 0, fmt.Errorf("short stat %q", stat)
	}
	last := 12 // stime: field N is f[N-3]
	if children {
		last = 14 // cstime
	}
	var ticks int64
	for _, s := range f[11 : last+1] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat field %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// cpuSample is the CPU time of each process measured, at one moment.
type cpuSample struct {
	at                                    time.Time
	harness, host, plugin, runtime, shims time.Duration
}

// cpuUse is the CPU time the processes spent over a window.
type cpuUse struct {
	window                                time.Duration
	harness, host, plugin, runtime, shims time.Duration
}

func (b *bench) sampleCPU() (cpuSample, error) {
	s := cpuSample{at: time.Now()}
	var err error
	read := func(dst *time.Duration, pid int, children bool) {
		if err != nil {
			return
		}
		*dst, err = cpuTime(pid, children)
	}
	read(&s.harness, os.Getpid(), false)
	read(&s.host, b.host.PID(), false)
	read(&s.plugin, b.host.PluginPID(), false)
	read(&s.runtime, b.ctrd.PID(), false)
	shims, serr := b.ctrd.Shims()
	if serr != nil {
		return s, serr
	}
	for _, pid := range shims {
		var d time.Duration
		read(&d, pid, true)
		s.shims += d
	}
	return s, err
}

// since is the CPU spent between two samples. Shims that started or
// ended in between make the shims' figure approximate; the phases keep
// their pods for the whole window.
func (s cpuSample) since(t cpuSample) cpuUse {
	return cpuUse{window: s.at.Sub(t.at), harness: s.harness - t.harness, host: s.host - t.host,
		plugin: s.plugin - t.plugin, runtime: s.runtime - t.runtime, shims: s.shims - t.shims}
}

// executions are the times the probe command ran in each target within
// [from, to], sorted, read from the files it left in the target's /ts.
func executions(ts []*target, from, to time.Time) ([][]time.Time, error) {
	out := make([][]time.Time, 0, len(ts))
	for _, t := range ts {
		entries, err := os.ReadDir(t.tsDir)
		if err != nil {
			return nil, err
		}
		var times []time.Time
		for _, e := range entries {
			info, err := e.Info()
			if err != nil {
				return nil, err
			}
			if m := info.ModTime(); !m.Before(from) && !m.After(to) {
				times = append(times, m)
			}
		}
		slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
		out = append(out, times)
	}
	return out, nil
}

// intervals are the gaps between consecutive executions of each target.
func intervals(execs [][]time.Time) []time.Duration {
	var out []time.Duration
	for _, times := range execs {
		for i := 1; i < len(times); i++ {
			out = append(out, times[i].Sub(times[i-1]))
		}
	}
	return out
}

// deviations are |interval - period|.
func deviations(ivs []time.Duration, period time.Duration) []time.Duration {
	out := make([]time.Duration, len(ivs))
	for i, d := range ivs {
		out[i] = max(d-period, period-d)
	}
	return out
}

// probeCounts sums prober_probe_total of the readiness probes by result,
// from the host's /metrics.
func (b *bench) probeCounts(ctx context.Context) (map[string]float64, error) {
	sock := filepath.Join(b.dir, "root", "host.sock")
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://host/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return parseProbeCounts(resp.Body)
}

// parseProbeCounts sums the prober_probe_total samples of Readiness
// probes by their result label.
func parseProbeCounts(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "prober_probe_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok || !strings.Contains(labels, `probe_type="Readiness"`) {
			continue
		}
		result := ""
		for _, l := range strings.Split(labels, ",") {
			if v, ok := strings.CutPrefix(l, "result="); ok {
				result = strings.Trim(v, `"`)
			}
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, fmt.Errorf("prober_probe_total value %q: %w", value, err)
		}
		out[result] += n
	}
	return out, sc.Err()
}
