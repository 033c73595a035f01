package runtimemanager

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// bareList is a runtime whose ListContainers gives no times, exit code or
// reason, like CRI's.
type bareList struct{ runtimev1.RuntimeClient }

func (b bareList) ListContainers(ctx context.Context, req *runtimev1.ListContainersRequest, opts ...grpc.CallOption) (*runtimev1.ListContainersResponse, error) {
	resp, err := b.RuntimeClient.ListContainers(ctx, req, opts...)
	if err != nil {
		return nil, err
	}
	out := &runtimev1.ListContainersResponse{}
	for _, c := range resp.GetContainers() {
		c = proto.Clone(c).(*runtimev1.Container)
		c.StartedAt, c.FinishedAt, c.ExitCode, c.Reason, c.Message = 0, 0, 0, "", ""
		out.Containers = append(out.Containers, c)
	}
	return out, nil
}

func TestPodStatusFillsWhatTheListLacks(t *testing.T) {
	e := newEnv(t)
	m, err := New(Options{Runtime: bareList{e.client}, Clock: e.clock, LogRoot: e.root})
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	pod := withPolicy(newPod("bare", "app"), "Never")
	e.mustSync(pod)
	if c := e.container(pod, "app"); c.State != lifecycle.ContainerRunning || c.StartedAt.IsZero() {
		t.Fatalf("running container: %+v; want a start time", c)
	}
	e.exit(pod, "app", 3)
	c := e.container(pod, "app")
	if c.State != lifecycle.ContainerExited || c.ExitCode != 3 || c.FinishedAt.IsZero() || c.StartedAt.IsZero() {
		t.Fatalf("exited container: %+v; want exit code 3 and its times", c)
	}
}
