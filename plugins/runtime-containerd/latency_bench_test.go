package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/test/crisetup"
)

// BenchmarkExitLatency measures how long a container's exit takes to
// reach the Events stream: from the exit time containerd records (the
// container's FinishedAt) to the EXITED event coming out of Subscribe's
// channel. Each iteration starts a busybox container that exits by itself
// 50 ms later. It reports the median, the 90th percentile and the largest
// latency of the run:
//
//	go test -run '^$' -bench ExitLatency -benchtime 30x ./plugins/runtime-containerd/
func BenchmarkExitLatency(b *testing.B) {
	c := crisetup.StartForTest(b)
	r := newCRIRuntime(testLogger())
	b.Cleanup(func() { _ = r.Close() })
	if errs := r.Configure(b.Context(), fmt.Appendf(nil, `{"endpoint":%q}`, c.Endpoint())); len(errs) > 0 {
		b.Fatalf("Configure: %v", errs)
	}
	img, _, err := r.EnsureImage(b.Context(), localimages.BusyboxName, PullNever)
	if err != nil {
		b.Fatal(err)
	}
	pod := SandboxSpec{Name: "latency", Namespace: "bench", UID: "latency", Attempt: 1, HostNetwork: true, LogDirectory: filepath.Join(b.TempDir(), "logs")}
	sb, err := r.RunSandbox(b.Context(), pod)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = r.RemoveSandbox(b.Context(), sb) })
	events, unsubscribe, err := r.Subscribe(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	defer unsubscribe()

	var latencies []time.Duration
	i := 0
	for b.Loop() {
		i++
		spec := ContainerSpec{Name: fmt.Sprintf("exit-%d", i), Image: img, Command: []string{"sh", "-c", "sleep 0.05"}, Labels: benchLabels(pod, "exit")}
		id, err := r.CreateContainer(b.Context(), sb, spec, &pod)
		if err == nil {
			err = r.StartContainer(b.Context(), id)
		}
		if err != nil {
			b.Fatal(err)
		}
		var received time.Time
		timeout := time.After(time.Minute)
		for received.IsZero() {
			select {
			case ev := <-events:
				if ev.Type == EventContainerExited && ev.ContainerID == id {
					received = time.Now()
				}
			case <-timeout:
				b.Fatalf("no exit event of %s within a minute", id)
			}
		}
		st, err := r.ContainerStatus(b.Context(), id)
		if err != nil {
			b.Fatal(err)
		}
		latencies = append(latencies, received.Sub(time.Unix(0, st.FinishedAt)))
		if err := r.RemoveContainer(b.Context(), id); err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(latencies)
	at := func(q float64) float64 { return float64(latencies[int(q*float64(len(latencies)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.5), "p50-ms")
	b.ReportMetric(at(0.9), "p90-ms")
	b.ReportMetric(at(1), "max-ms")
}
