package nodestats

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// BenchmarkGather50 is the host's side of one reading of a node of 50
// pods: decoding the runtime's answer (as gRPC does), /proc and statfs,
// and a summary built for a scrape. The plugin's and containerd's sides
// are runtime-containerd's BenchmarkStatsCost.
//
//	go test -run '^$' -bench Gather50 ./host/nodestats/
func BenchmarkGather50(b *testing.B) {
	resp := &runtimev1.ListStatsResponse{}
	for i := range 50 {
		r := reading(0, uint64(i)*1e9)
		sb, c := r.Sandboxes[0], r.Containers[1]
		sb.SandboxId, sb.Metadata.Name, sb.Metadata.Uid = fmt.Sprint("sb", i), fmt.Sprint("pod", i), fmt.Sprint("uid", i)
		c.ContainerId, c.SandboxId = fmt.Sprint("c", i), sb.SandboxId
		resp.Sandboxes, resp.Containers = append(resp.Sandboxes, sb), append(resp.Containers, c)
		resp.ImageFilesystems = r.ImageFilesystems
	}
	wire, err := proto.Marshal(resp)
	if err != nil {
		b.Fatal(err)
	}
	p := New(Config{NodeName: "n1", RootDir: b.TempDir(), Runtime: func(context.Context) (*runtimev1.ListStatsResponse, error) {
		out := &runtimev1.ListStatsResponse{}
		return out, proto.Unmarshal(wire, out)
	}})
	for b.Loop() {
		p.Gather(b.Context())
		if s, err := p.Summary(); err != nil || len(s.Pods) != 50 {
			b.Fatalf("%d pods, %v", len(s.Pods), err)
		}
	}
}
