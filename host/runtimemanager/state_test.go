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

// losing is a bare-list runtime that loses every container between
// ListContainers and ContainerStatus: the container is removed, and
// ContainerStatus answers NOT_FOUND.
type losing struct{ bareList }

func (l losing) ContainerStatus(ctx context.Context, req *runtimev1.ContainerStatusRequest, opts ...grpc.CallOption) (*runtimev1.ContainerStatusResponse, error) {
	if _, err := l.RemoveContainer(ctx, &runtimev1.RemoveContainerRequest{ContainerId: req.GetContainerId()}); err != nil {
		return nil, err
	}
	return l.bareList.ContainerStatus(ctx, req, opts...)
}

// A container whose status cannot be read is unknown, never exited 0:
// the listing carries no exit code, so nothing says it succeeded.
func TestPodStatusNoExitZeroWithoutEvidence(t *testing.T) {
	tests := []struct {
		name string
		exit int32 // -1: still running when lost
	}{
		{"lost while running", -1},
		{"lost after exit 0", 0},
		{"lost after exit 3", 3},
		{"lost after a kill", 137},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			pod := withPolicy(newPod("lost", "app"), "Never")
			e.mustSync(pod)
			if tt.exit >= 0 {
				e.exit(pod, "app", tt.exit)
			}
			m, err := New(Options{Runtime: losing{bareList{e.client}}, Clock: e.clock, LogRoot: e.root})
			if err != nil {
				t.Fatal(err)
			}
			st, err := m.PodStatus(context.Background(), pod.UID, pod.Name, pod.Namespace)
			if err != nil {
				t.Fatalf("PodStatus: %v", err)
			}
			c := st.Container("app")
			if c == nil {
				t.Fatalf("no status of the lost container in %+v", st)
			}
			if c.State != lifecycle.ContainerUnknown || c.ExitCode != 0 || c.Reason != "" {
				t.Errorf("lost container: state %s exit %d reason %q; want %s, no exit code, no reason", c.State, c.ExitCode, c.Reason, lifecycle.ContainerUnknown)
			}
		})
	}
}
