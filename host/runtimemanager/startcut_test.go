package runtimemanager

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/runtimemanager/runtimetestfake"
	"github.com/podhost/podhost/host/supervisor"
	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// dyingStart is a runtime whose plugin dies during the next StartContainer
// calls (cuts of them): the host's call fails with ErrPluginExited, as the
// supervisor's call guard reports it, and the container is left as
// containerd leaves it (exited 128 StartError, never started) or, when
// started is set, started before the answer was lost.
type dyingStart struct {
	runtimev1.RuntimeClient
	fake    *runtimetestfake.Fake
	cuts    int
	started bool
	err     error // nil: ErrPluginExited, as the call guard reports it
}

func (d *dyingStart) StartContainer(ctx context.Context, req *runtimev1.StartContainerRequest, opts ...grpc.CallOption) (*runtimev1.StartContainerResponse, error) {
	if d.cuts == 0 {
		return d.RuntimeClient.StartContainer(ctx, req, opts...)
	}
	d.cuts--
	if d.started {
		if _, err := d.RuntimeClient.StartContainer(ctx, req, opts...); err != nil {
			return nil, err
		}
	} else {
		d.fake.CutStart(req.GetContainerId())
	}
	if d.err != nil {
		return nil, d.err
	}
	return nil, fmt.Errorf("plugin %q: %w: %w", "fake", supervisor.ErrPluginExited, status.Error(codes.Unavailable, "error reading from server: EOF"))
}

// A StartContainer cut short by the plugin's death is no crash of the
// container: the status shows it waiting, not exited 128, and once the
// plugin is back the container is created again at the same attempt, with
// no back-off, under every restart policy.
func TestSyncPodStartCutByPluginDeath(t *testing.T) {
	tests := []struct {
		name    string
		policy  v1.RestartPolicy
		inits   bool
		cuts    int
		started bool
		err     error
	}{
		{name: "Never", policy: v1.RestartPolicyNever, cuts: 1},
		{name: "OnFailure", policy: v1.RestartPolicyOnFailure, cuts: 1},
		{name: "Always, cut twice", policy: v1.RestartPolicyAlways, cuts: 2},
		{name: "Never, init container", policy: v1.RestartPolicyNever, inits: true, cuts: 1},
		{name: "Never, started before the answer was lost", policy: v1.RestartPolicyNever, cuts: 1, started: true},
		{name: "Never, transport broke before the exit was confirmed", policy: v1.RestartPolicyNever, cuts: 1, err: status.Error(codes.Unavailable, "connection reset by peer")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			rt := &dyingStart{RuntimeClient: e.client, fake: e.fake, cuts: tt.cuts, started: tt.started, err: tt.err}
			m, err := New(Options{Runtime: rt, Clock: e.clock, LogRoot: e.root, Reasons: e.reasons})
			if err != nil {
				t.Fatal(err)
			}
			e.m = m
			pod := withPolicy(newPod("cut", "app"), tt.policy)
			first := "app"
			if tt.inits {
				pod = withInits(pod, "setup")
				first = "setup"
			}
			for i := range tt.cuts {
				if err := e.sync(pod); err == nil {
					t.Fatalf("sync %d, plugin dies: no error", i)
				}
				c := e.container(pod, first)
				if tt.started {
					break
				}
				if c.State != lifecycle.ContainerCreated || c.ExitCode != 0 || c.RestartCount != 0 {
					t.Fatalf("sync %d: %s after a cut start: %+v; want created, exit code 0, no restart", i, first, c)
				}
				if pods, err := e.m.ListPods(context.Background()); err != nil || len(pods) != 1 || pods[0].Containers[0].State != lifecycle.ContainerCreated {
					t.Fatalf("sync %d: ListPods after a cut start: %+v, %v; want the container created", i, pods, err)
				}
			}
			startedBefore := e.count("StartContainer")
			if tt.inits {
				e.mustSync(pod)
				e.exit(pod, "setup", 0)
			}
			e.mustSync(pod) // the plugin is back: no back-off
			c := e.container(pod, "app")
			if c.State != lifecycle.ContainerRunning || c.RestartCount != 0 {
				t.Fatalf("app once the plugin is back: %+v; want running, restart count 0", c)
			}
			if tt.started && e.count("StartContainer") != startedBefore {
				t.Errorf("a container that did start was started again")
			}
			if n := len(e.fake.Containers()); n != 1+btoi(tt.inits) {
				t.Errorf("containers: got %d; want one per name (the cut one removed)", n)
			}
			for _, r := range e.fake.Calls() {
				if req, ok := r.Req.(*runtimev1.CreateContainerRequest); ok && req.GetConfig().GetMetadata().GetAttempt() != 0 {
					t.Errorf("CreateContainer %s at attempt %d; want 0 every time", req.GetConfig().GetMetadata().GetName(), req.GetConfig().GetMetadata().GetAttempt())
				}
			}
			if _, ok := e.reasons.Get(pod.UID, first); ok {
				t.Errorf("a waiting reason is left for %s", first)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A start that times out is the container's failure, not the plugin's
// death: a Never pod's container stays exited.
func TestSyncPodStartTimeoutIsAFailure(t *testing.T) {
	e := newEnv(t)
	rt := &dyingStart{RuntimeClient: e.client, fake: e.fake, cuts: 1, err: status.Error(codes.DeadlineExceeded, "context deadline exceeded")}
	m, err := New(Options{Runtime: rt, Clock: e.clock, LogRoot: e.root})
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	pod := withPolicy(newPod("slow", "app"), v1.RestartPolicyNever)
	if err := e.sync(pod); !errors.Is(err, ErrUncertain) {
		t.Fatalf("sync: got %v; want ErrUncertain", err)
	}
	e.mustSync(pod)
	if c := e.container(pod, "app"); c.State != lifecycle.ContainerExited || c.ExitCode != 128 {
		t.Fatalf("app after a start timeout: %+v; want exited 128", c)
	}
	if n := e.count("CreateContainer"); n != 1 {
		t.Errorf("CreateContainer calls: %d; want 1 (a Never pod does not retry)", n)
	}
}
