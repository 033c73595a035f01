package hostproc

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

// CPUTime is the user + system CPU time the process pid has used so far.
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	d, err := parseCPUTime(string(b))
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return d, nil
}

// parseCPUTime reads utime + stime from a /proc/PID/stat line. The command
// name in parentheses may hold spaces; the fields after it are fixed.
func parseCPUTime(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("too few fields")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("utime %q, stime %q", f[11], f[12])
	}
	return time.Duration(u+s) * time.Second / clockTicks, nil
}

// RSSMiB is the resident set size (VmRSS) of the process pid in MiB, or 0
// when it cannot be read.
func RSSMiB(pid int) float64 { return statusMiB(pid, "VmRSS") }

// AnonMiB is the anonymous part of the process's resident set (RssAnon:
// heap and stacks, without the mapped binary and files) in MiB, or 0 when
// it cannot be read.
func AnonMiB(pid int) float64 { return statusMiB(pid, "RssAnon") }

func statusMiB(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	return parseStatusMiB(string(b), field)
}

// parseStatusMiB reads a field in kB ("VmRSS") from a /proc/PID/status
// file as MiB; 0 without one.
func parseStatusMiB(status, field string) float64 {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// Usage is what each named process used over one window: CPU in percent
// of one core, and RSS and its anonymous part in MiB at the window's end.
type Usage struct {
	CPU  map[string]float64
	RSS  map[string]float64
	Anon map[string]float64
}

// Measure samples the CPU time of the named processes (name → PID) before
// and after window, and their RSS at its end. A process that cannot be
// read at either end fails the measurement.
func Measure(ctx context.Context, window time.Duration, pids map[string]int) (Usage, error) {
	before := map[string]time.Duration{}
	for name, pid := range pids {
		t, err := CPUTime(pid)
		if err != nil {
			return Usage{}, fmt.Errorf("%s: %w", name, err)
		}
		before[name] = t
	}
	began := time.Now()
	select {
	case <-ctx.Done():
		return Usage{}, ctx.Err()
	case <-time.After(window):
	}
	elapsed := time.Since(began)
	u := Usage{CPU: map[string]float64{}, RSS: map[string]float64{}, Anon: map[string]float64{}}
	for name, pid := range pids {
		t, err := CPUTime(pid)
		if err != nil {
			return Usage{}, fmt.Errorf("%s: %w", name, err)
		}
		u.CPU[name] = 100 * float64(t-before[name]) / float64(elapsed)
		u.RSS[name] = RSSMiB(pid)
		u.Anon[name] = AnonMiB(pid)
	}
	return u, nil
}
