package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/test/crisetup"
)

// BenchmarkWatchCost measures what the Events watch costs at rest on a node
// with 100 running containers (4 host-network sandboxes of 25 `sleep`
// containers each): it keeps one subscriber for a window
// (PODHOST_WATCH_WINDOW, default 30s) and reports the CPU time, as a
// percentage of one core, of this process (the plugin's side) and of
// containerd, less containerd's idle use measured over the same window
// with no watch. The watch follows containerd's events, so at rest both
// should be close to nothing.
//
//	go test -run '^$' -bench WatchCost -benchtime 1x ./plugins/runtime-containerd/
//
// Its "poll" part times one listing and diff, what a resync costs; it
// means something with more iterations, and PODHOST_WATCH_POLL_ONLY=1
// skips the windows:
//
//	PODHOST_WATCH_POLL_ONLY=1 go test -run '^$' -bench WatchCost -benchtime 400x ./plugins/runtime-containerd/
func BenchmarkWatchCost(b *testing.B) {
	window := 30 * time.Second
	if s := os.Getenv("PODHOST_WATCH_WINDOW"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatalf("PODHOST_WATCH_WINDOW: %v", err)
		}
		window = d
	}
	c := crisetup.StartForTest(b)
	r := newCRIRuntime(testLogger())
	b.Cleanup(func() { _ = r.Close() })
	cfg := fmt.Sprintf(`{"endpoint":%q}`, c.Endpoint())
	if errs := r.Configure(b.Context(), []byte(cfg)); len(errs) > 0 {
		b.Fatalf("Configure: %v", errs)
	}
	start := time.Now()
	sandboxes, err := makeContainers(b.Context(), r, 4, 25, b.TempDir())
	b.Cleanup(func() {
		// crisetup stops containers one by one within 30s, too slow for
		// 100; removing a sandbox kills its containers at once.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for _, id := range sandboxes {
			if err := r.RemoveSandbox(ctx, id); err != nil {
				b.Errorf("RemoveSandbox: %v", err)
			}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("made 100 running containers in %v", time.Since(start).Round(time.Millisecond))

	b.Run("poll", func(b *testing.B) {
		// One listing and diff, as the watcher's resync does.
		before, selfBefore := procCPU(b, c.PID()), selfCPU(b)
		prev, err := r.list(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			cur, err := r.list(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			if evs := diff(prev, cur, 0); len(evs) > 0 {
				b.Fatalf("steady state: got events %v", evs)
			}
			prev = cur
		}
		b.ReportMetric(float64((selfCPU(b)-selfBefore).Microseconds())/float64(b.N), "plugin-µs/op")
		b.ReportMetric(float64((procCPU(b, c.PID())-before).Microseconds())/float64(b.N), "containerd-µs/op")
	})
	if os.Getenv("PODHOST_WATCH_POLL_ONLY") != "" {
		return
	}

	idle := measure(b, c.PID(), window, func() {})
	b.Logf("idle: containerd %.3f%% of a core, this process %.3f%%", idle.containerd, idle.self)
	b.Run("subscribed", func(b *testing.B) {
		for b.Loop() {
			var events int
			m := measure(b, c.PID(), window, func() {
				ch, unsubscribe, err := r.Subscribe(b.Context())
				if err != nil {
					b.Fatalf("Subscribe: %v", err)
				}
				timer := time.NewTimer(window)
				defer timer.Stop()
				for {
					select {
					case <-ch:
						events++
					case <-timer.C:
						unsubscribe()
						return
					}
				}
			})
			b.ReportMetric(m.self, "plugin-%core")
			b.ReportMetric(m.containerd-idle.containerd, "containerd-%core")
			b.ReportMetric(m.containerd, "containerd-total-%core")
			b.Logf("subscribed over %v: plugin %.3f%% of a core, containerd %.3f%% (%.3f%% idle), %d events", window, m.self, m.containerd, idle.containerd, events)
		}
	})
}

// cpuShare is CPU time as a percentage of one core over a window.
type cpuShare struct{ self, containerd float64 }

// measure runs work (which returns after about window; an empty work waits
// for window) and reports the CPU this process and containerd used.
func measure(b *testing.B, containerdPID int, window time.Duration, work func()) cpuShare {
	b.Helper()
	selfBefore, cBefore := selfCPU(b), procCPU(b, containerdPID)
	start := time.Now()
	work()
	if rest := window - time.Since(start); rest > 0 {
		<-time.After(rest)
	}
	elapsed := time.Since(start)
	selfAfter, cAfter := selfCPU(b), procCPU(b, containerdPID)
	pct := func(d time.Duration) float64 { return 100 * d.Seconds() / elapsed.Seconds() }
	return cpuShare{self: pct(selfAfter - selfBefore), containerd: pct(cAfter - cBefore)}
}

// selfCPU is this process's user and system time.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTick is the unit of /proc/PID/stat times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// procCPU is the user and system time of process pid, from /proc.
func procCPU(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		b.Fatalf("read containerd's stat: %v", err)
	}
	d, err := statCPU(stat)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// statCPU parses utime and stime (fields 14 and 15) of /proc/PID/stat.
func statCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[i+1:])) // fields[0] is field 3
	if i < 0 || len(fields) < 13 {
		return 0, fmt.Errorf("unexpected /proc stat %q", stat)
	}
	var total int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("unexpected /proc stat %q: %w", stat, err)
		}
		total += n
	}
	return time.Duration(total) * clockTick, nil
}

// makeContainers runs n host-network sandboxes of perSandbox running
// `sleep` containers each, and returns the sandboxes it ran.
func makeContainers(ctx context.Context, r *criRuntime, n, perSandbox int, logs string) ([]string, error) {
	img, _, err := r.EnsureImage(ctx, localimages.BusyboxName, PullNever, nil)
	if err != nil {
		return nil, err
	}
	var sandboxes []string
	for s := range n {
		pod := SandboxSpec{
			Name: fmt.Sprintf("bench-%d", s), Namespace: "bench", UID: fmt.Sprintf("bench-%d", s), Attempt: 1,
			HostNetwork: true, LogDirectory: filepath.Join(logs, strconv.Itoa(s)),
		}
		sb, err := r.RunSandbox(ctx, pod)
		if err != nil {
			return sandboxes, err
		}
		sandboxes = append(sandboxes, sb)
		// Two at a time: the machine has two cores.
		var wg sync.WaitGroup
		errs := make([]error, perSandbox)
		sem := make(chan struct{}, 2)
		for i := range perSandbox {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				spec := ContainerSpec{
					Name: fmt.Sprintf("sleep-%d", i), Image: img, Command: []string{"sleep", "1000000"},
					Labels: benchLabels(pod, fmt.Sprintf("sleep-%d", i)),
				}
				id, err := r.CreateContainer(ctx, sb, spec, &pod)
				if err == nil {
					err = r.StartContainer(ctx, id)
				}
				errs[i] = err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return sandboxes, err
		}
	}
	return sandboxes, nil
}

// benchLabels are the labels the host gives a container: its pod's
// identity, its name and its attempt.
func benchLabels(pod SandboxSpec, name string) map[string]string {
	return map[string]string{
		"podhost.io/pod-uid": pod.UID, "podhost.io/pod-namespace": pod.Namespace, "podhost.io/pod-name": pod.Name,
		"podhost.io/container-name": name, "podhost.io/attempt": "0",
	}
}
