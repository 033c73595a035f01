package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/podhost/podhost/test/crisetup"
)

// BenchmarkStatsCost measures one ListStats reading (CRI's
// ListContainerStats, ListContainers, ListPodSandbox and ImageFsInfo,
// joined and converted to the contract's messages) on a node of 50
// host-network pods of one running `sleep` container each: the CPU time
// of this process (the plugin's side) and of containerd per reading, and
// what that is as a share of one core at the host's one reading per 10 s.
//
//	go test -run '^$' -bench StatsCost -benchtime 50x ./plugins/runtime-containerd/
func BenchmarkStatsCost(b *testing.B) {
	c := crisetup.StartForTest(b)
	r := newCRIRuntime(testLogger())
	b.Cleanup(func() { _ = r.Close() })
	if errs := r.Configure(b.Context(), []byte(fmt.Sprintf(`{"endpoint":%q}`, c.Endpoint()))); len(errs) > 0 {
		b.Fatalf("Configure: %v", errs)
	}
	sandboxes, err := makeContainers(b.Context(), r, 50, 1, b.TempDir())
	b.Cleanup(func() {
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
	s := &server{rt: r}
	before, selfBefore := procCPU(b, c.PID()), selfCPU(b)
	for b.Loop() {
		resp, err := s.ListStats(b.Context(), nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.GetSandboxes()) != 50 || len(resp.GetContainers()) != 50 {
			b.Fatalf("%d sandboxes and %d containers; want 50 of each", len(resp.GetSandboxes()), len(resp.GetContainers()))
		}
	}
	self := (selfCPU(b) - selfBefore) / time.Duration(b.N)
	ctrd := (procCPU(b, c.PID()) - before) / time.Duration(b.N)
	b.ReportMetric(float64(self.Microseconds()), "plugin-µs/op")
	b.ReportMetric(float64(ctrd.Microseconds()), "containerd-µs/op")
	b.ReportMetric(100*float64(self+ctrd)/float64(10*time.Second), "%core@10s")
}
