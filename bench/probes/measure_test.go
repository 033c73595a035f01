package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseCPU(t *testing.T) {
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime …
	stat := "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 12 0"
	for _, tc := range []struct {
		children bool
		want     time.Duration
	}{{false, 2 * time.Second}, {true, 2100 * time.Millisecond}} {
		got, err := parseCPU(stat, tc.children)
		if err != nil || got != tc.want {
			t.Errorf("parseCPU(children %v) = %v, %v; want %v", tc.children, got, err, tc.want)
		}
	}
	if _, err := parseCPU("4242 (x) S 1", false); err == nil {
		t.Error("a short stat line gave no error")
	}
}

func TestIntervalsAndDeviations(t *testing.T) {
	t0 := time.Unix(100, 0)
	at := func(ms ...int) []time.Time {
		var out []time.Time
		for _, m := range ms {
			out = append(out, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return out
	}
	ivs := intervals([][]time.Time{at(0, 1000, 2100), at(500), at(0, 990)})
	want := []time.Duration{time.Second, 1100 * time.Millisecond, 990 * time.Millisecond}
	if len(ivs) != len(want) {
		t.Fatalf("intervals = %v; want %v", ivs, want)
	}
	for i := range want {
		if ivs[i] != want[i] {
			t.Errorf("intervals[%d] = %v; want %v", i, ivs[i], want[i])
		}
	}
	dev := deviations(ivs, time.Second)
	if dev[0] != 0 || dev[1] != 100*time.Millisecond || dev[2] != 10*time.Millisecond {
		t.Errorf("deviations = %v; want [0 100ms 10ms]", dev)
	}
}

func TestParseProbeCounts(t *testing.T) {
	metrics := `# HELP prober_probe_total Cumulative number of a liveness, readiness or startup probe for a container by result.
prober_probe_total{container="c00",namespace="default",pod="p",pod_uid="u",probe_type="Readiness",result="successful"} 12
prober_probe_total{container="c01",namespace="default",pod="p",pod_uid="u",probe_type="Readiness",result="successful"} 10
prober_probe_total{container="c01",namespace="default",pod="p",pod_uid="u",probe_type="Readiness",result="failed"} 2
prober_probe_total{container="c01",namespace="default",pod="p",pod_uid="u",probe_type="Liveness",result="failed"} 5
`
	got, err := parseProbeCounts(strings.NewReader(metrics))
	if err != nil || got["successful"] != 22 || got["failed"] != 2 || len(got) != 2 {
		t.Errorf("parseProbeCounts = %v, %v; want successful 22, failed 2 (readiness only)", got, err)
	}
}
