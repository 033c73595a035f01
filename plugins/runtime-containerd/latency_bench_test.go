package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"
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
// latency of the run, and the same for containerd's own exit event reaching
// the process (the floor: the plugin answers once CRI shows the exit, which
// CRI records after it has deleted the task):
//
//	go test -run '^$' -bench ExitLatency -benchtime 30x ./plugins/runtime-containerd/
func BenchmarkExitLatency(b *testing.B) {
	c := crisetup.StartForTest(b)
	r := newCRIRuntime(testLogger())
	b.Cleanup(func() { _ = r.Close() })
	if errs := r.Configure(b.Context(), fmt.Appendf(nil, `{"endpoint":%q}`, c.Endpoint())); len(errs) > 0 {
		b.Fatalf("Configure: %v", errs)
	}
	img, _, err := r.EnsureImage(b.Context(), localimages.BusyboxName, PullNever, nil)
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
	raw := rawExits(b, r)

	var latencies, rawLatencies, deleteLatencies []time.Duration
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
		finished := time.Unix(0, st.FinishedAt)
		latencies = append(latencies, received.Sub(finished))
		exit, deleted := raw(id)
		rawLatencies = append(rawLatencies, exit.Sub(finished))
		deleteLatencies = append(deleteLatencies, deleted.Sub(finished))
		if err := r.RemoveContainer(b.Context(), id); err != nil {
			b.Fatal(err)
		}
	}
	at := func(l []time.Duration, q float64) float64 {
		slices.Sort(l)
		return float64(l[int(q*float64(len(l)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(at(latencies, 0.5), "p50-ms")
	b.ReportMetric(at(latencies, 0.9), "p90-ms")
	b.ReportMetric(at(latencies, 1), "max-ms")
	b.ReportMetric(at(rawLatencies, 0.5), "containerd-p50-ms")
	b.ReportMetric(at(rawLatencies, 0.9), "containerd-p90-ms")
	b.ReportMetric(at(deleteLatencies, 0.5), "delete-p50-ms")
}

// rawExits subscribes to containerd's events straight, as the floor of
// the plugin's latency: when containerd's own exit event reaches this
// process. The function it returns waits for the exit of id and for its
// task's delete, after which CRI records the exit.
func rawExits(b *testing.B, r *criRuntime) func(id string) (exit, deleted time.Time) {
	sub, err := r.subscribe(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]chan time.Time{}
	ch := func(id string) chan time.Time {
		mu.Lock()
		defer mu.Unlock()
		if seen[id] == nil {
			seen[id] = make(chan time.Time, 2)
		}
		return seen[id]
	}
	go func() {
		for {
			ev, err := sub.next()
			if err != nil {
				return
			}
			if ev.topic == topicExited {
				select {
				case ch(ev.id) <- time.Now():
				default:
				}
			}
		}
	}()
	return func(id string) (time.Time, time.Time) { return <-ch(id), <-ch(id) }
}
