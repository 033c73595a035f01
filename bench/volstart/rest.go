package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat;
// 100 on every Linux this runs on.
const clockTicks = 100

// cpuTime is the user + system CPU a process has used.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces; the fields after it are fixed.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	return time.Duration(u+st) * time.Second / clockTicks, nil
}

// rssMiB is a process's resident set size.
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// usage is the CPU (percent of one core) and RSS of each process over one
// window.
type usage struct {
	cpu map[string]float64
	rss map[string]float64
}

// measure samples the processes' CPU over window.
func measure(ctx context.Context, window time.Duration, pids map[string]int) (usage, error) {
	before := map[string]time.Duration{}
	for name, pid := range pids {
		t, err := cpuTime(pid)
		if err != nil {
			return usage{}, fmt.Errorf("%s: %w", name, err)
		}
		before[name] = t
	}
	began := time.Now()
	select {
	case <-ctx.Done():
		return usage{}, ctx.Err()
	case <-time.After(window):
	}
	elapsed := time.Since(began)
	u := usage{cpu: map[string]float64{}, rss: map[string]float64{}}
	for name, pid := range pids {
		t, err := cpuTime(pid)
		if err != nil {
			return usage{}, fmt.Errorf("%s: %w", name, err)
		}
		u.cpu[name] = 100 * float64(t-before[name]) / float64(elapsed)
		u.rss[name] = rssMiB(pid)
	}
	return u, nil
}

// restResult is the rest phase without and with the volumes.
type restResult struct {
	without, with usage
}

// procOrder is the order of the processes in the table.
var procOrder = []string{"host", "volume-csi", "runtime-containerd", "csi-loopdriver"}

// measureRest runs the pods without volumes, measures, deletes them; then
// runs them with the volumes, measures, deletes them and waits until every
// volume is unstaged.
func measureRest(ctx context.Context, o options, h *host, w *watcher, d *driver) (*restResult, error) {
	pids := map[string]int{"host": h.PID(), "volume-csi": h.csiPID, "runtime-containerd": h.PluginPID(), "csi-loopdriver": d.pid()}
	var r restResult
	for _, withVolumes := range []bool{false, true} {
		pods := map[string][]byte{}
		claims := make([][]string, o.restPods)
		var volumes []string
		if withVolumes {
			for i := range o.restVolumes {
				c := fmt.Sprintf("rest-%d", i)
				claims[i%o.restPods] = append(claims[i%o.restPods], c)
				volumes = append(volumes, c)
			}
		}
		var names []string
		for i := range o.restPods {
			name := fmt.Sprintf("idle-%d", i)
			if withVolumes {
				name = fmt.Sprintf("held-%d", i)
			}
			pods[name] = pod(name, claims[i]...)
			names = append(names, name)
		}
		if _, err := runPods(ctx, o, h, w, pods); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "volstart: %d pods running (%d volumes); %s to settle, then %s of CPU\n", len(pods), len(volumes), o.settle, o.window)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(o.settle):
		}
		var profiled chan error
		if withVolumes && o.profile != "" {
			profiled = make(chan error, 1)
			wait := h.ProfileCPU(ctx, "volstart", o.profile, o.window)
			go func() { profiled <- wait() }()
		}
		u, err := measure(ctx, o.window, pids)
		if err != nil {
			return nil, err
		}
		if profiled != nil {
			if err := <-profiled; err != nil {
				return nil, fmt.Errorf("profile: %w", err)
			}
		}
		if withVolumes {
			r.with = u
		} else {
			r.without = u
		}
		if err := deletePods(ctx, o, h, w, names); err != nil {
			return nil, err
		}
		if err := waitDetached(ctx, o, d, volumes...); err != nil {
			return nil, err
		}
	}
	return &r, nil
}

func (r *restResult) table(o options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "At rest, %d pods, CPU over %s (%% of one core) and RSS:\n\n", o.restPods, o.window)
	fmt.Fprintf(&b, "| process | no volumes: CPU | %d volumes: CPU | added | no volumes: RSS | %d volumes: RSS |\n|---|---|---|---|---|---|\n", o.restVolumes, o.restVolumes)
	for _, p := range procOrder {
		fmt.Fprintf(&b, "| %s | %.2f %% | %.2f %% | %+.2f %% | %.1f MiB | %.1f MiB |\n", p,
			r.without.cpu[p], r.with.cpu[p], r.with.cpu[p]-r.without.cpu[p], r.without.rss[p], r.with.rss[p])
	}
	added := r.with.cpu["host"] + r.with.cpu["volume-csi"] - r.without.cpu["host"] - r.without.cpu["volume-csi"]
	fmt.Fprintf(&b, "\nHost + volume-csi with %d volumes mounted add %.2f %% of one core: goal under 1 %%: %s.\n", o.restVolumes, added, verdict(added < 1))
	return b.String()
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "not met"
}
