package runtimemanager

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/supervisor"
	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func TestKillPodStopsContainersWithGraceThenSandbox(t *testing.T) {
	e := newEnv(t)
	pod := newPod("kill", "a", "b")
	e.mustSync(pod)
	for range 2 { // idempotent
		if err := e.m.KillPod(context.Background(), pod, nil, 7); err != nil {
			t.Fatalf("KillPod: %v", err)
		}
	}
	var stops []int64
	lastStop, firstSandboxStop := -1, -1
	for i, c := range e.fake.Calls() {
		switch r := c.Req.(type) {
		case *runtimev1.StopContainerRequest:
			stops = append(stops, r.GetTimeoutSeconds())
			lastStop = i
		case *runtimev1.StopSandboxRequest:
			if firstSandboxStop < 0 {
				firstSandboxStop = i
			}
		}
	}
	if len(stops) != 2 || stops[0] != 7 || stops[1] != 7 {
		t.Errorf("StopContainer timeouts: got %v; want [7 7] (running containers only, once)", stops)
	}
	if firstSandboxStop < lastStop {
		t.Errorf("StopSandbox (call %d) before the last StopContainer (call %d)", firstSandboxStop, lastStop)
	}
	st := e.status(pod)
	if st.HasRunning() {
		t.Fatalf("after KillPod: %+v", st)
	}
	for _, c := range st.ContainerStatuses {
		if c.ExitCode != 0 {
			t.Errorf("%s exit code %d; want 0 (it honoured SIGTERM within the grace period)", c.Name, c.ExitCode)
		}
	}
}

func TestKillPodRuntimeOnly(t *testing.T) {
	e := newEnv(t)
	pod := newPod("orphan", "a")
	e.mustSync(pod)
	pods, err := e.m.ListPods(context.Background())
	if err != nil || len(pods) != 1 {
		t.Fatalf("ListPods: %v, %v", pods, err)
	}
	if err := e.m.KillPod(context.Background(), nil, pods[0], 1); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	if e.status(pod).HasRunning() {
		t.Fatal("runtime-only pod still runs")
	}
	for _, c := range e.fake.Calls() {
		if r, ok := c.Req.(*runtimev1.StopContainerRequest); ok && r.GetTimeoutSeconds() != 1 {
			t.Errorf("StopContainer timeout: got %d; want 1", r.GetTimeoutSeconds())
		}
	}
}

func TestKillPodFailedStopLeavesSandbox(t *testing.T) {
	e := newEnv(t)
	pod := newPod("stuck", "a")
	e.mustSync(pod)
	e.m.rt = exitedClient{e.client}
	err := e.m.KillPod(context.Background(), pod, nil, 30)
	if !errors.Is(err, supervisor.ErrPluginExited) {
		t.Fatalf("KillPod: got %v; want ErrPluginExited", err)
	}
	if n := e.count("StopSandbox"); n != 0 {
		t.Errorf("StopSandbox calls: got %d; want 0 while a container stop failed", n)
	}
}

// exitedClient fails StopContainer like the supervisor does when the
// plugin dies during the call.
type exitedClient struct{ runtimev1.RuntimeClient }

func (exitedClient) StopContainer(context.Context, *runtimev1.StopContainerRequest, ...grpc.CallOption) (*runtimev1.StopContainerResponse, error) {
	return nil, fmt.Errorf("plugin %q: %w", "fake", supervisor.ErrPluginExited)
}

func TestRemovePodAndGarbageCollect(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	done := newPod("done", "a")
	live := newPod("live", "a")
	e.mustSync(done)
	e.mustSync(live)
	if err := e.m.RemovePod(ctx, done.UID); !errors.Is(err, ErrPodRunning) {
		t.Fatalf("RemovePod of a running pod: got %v; want ErrPodRunning", err)
	}
	// live crashes twice: the older dead container is pruned, the newest kept.
	e.exit(live, "a", 1)
	e.clock.Step(BackOffInitial)
	e.mustSync(live)
	e.exit(live, "a", 1)
	if err := e.m.KillPod(ctx, done, nil, 1); err != nil {
		t.Fatal(err)
	}
	removable := func(uid string) bool { return uid == string(done.UID) }
	if err := e.m.GarbageCollect(ctx, func(u types.UID) bool { return removable(string(u)) }); err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if st := e.status(done); len(st.ContainerStatuses) != 0 || st.SandboxReady {
		t.Errorf("finished pod after GC: %+v; want nothing", st)
	}
	if _, err := FindLog(e.root, "default", "done", "a"); !errors.Is(err, ErrNoLog) {
		t.Errorf("logs of a removed pod: got %v; want ErrNoLog", err)
	}
	st := e.status(live)
	if len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].RestartCount != 1 || !st.SandboxReady {
		t.Errorf("live pod after GC: %+v; want its sandbox and newest container", st)
	}
	if err := e.m.RemovePod(ctx, done.UID); err != nil {
		t.Errorf("RemovePod of a removed pod: %v", err)
	}
	var _ lifecycle.Runtime = e.m
}

// The sidecars stop after the app containers, the later ones first, as
// the kubelet terminates them: a sidecar serves the others (and their
// preStop hooks) until they are gone (upstream Restartable Init Container
// Lifecycle Hook should execute prestop https hook properly).
func TestKillPodStopsSidecarsLastInReverse(t *testing.T) {
	e := newEnv(t)
	always := v1.ContainerRestartPolicyAlways
	pod := withInits(newPod("sidecars", "app1", "app2"), "first", "second")
	pod.Spec.InitContainers[0].RestartPolicy = &always
	pod.Spec.InitContainers[1].RestartPolicy = &always
	for range 4 {
		e.mustSync(pod)
	}
	names := map[string]string{}
	for _, n := range []string{"app1", "app2", "first", "second"} {
		names[e.container(pod, n).ID] = n
	}
	if err := e.m.KillPod(context.Background(), pod, nil, 7); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	var order []string
	for _, c := range e.fake.Calls() {
		if r, ok := c.Req.(*runtimev1.StopContainerRequest); ok {
			order = append(order, names[r.GetContainerId()])
		}
	}
	if len(order) != 4 || !slices.Equal(order[2:], []string{"second", "first"}) || slices.Contains(order[:2], "first") || slices.Contains(order[:2], "second") {
		t.Fatalf("stop order: %v; want app1 and app2 (any order), then second, then first", order)
	}
}
