package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/images/localimages"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/test/criproxy"
	"github.com/podhost/podhost/test/crisetup"
)

// TestSnapshotWithContainerd checks the listings the plugin serves from its
// watcher's snapshot against a private containerd: after each of the
// plugin's own calls, after a container's own exit, after a change made
// behind its back and after a containerd restart, they equal what an
// unsubscribed plugin (which lists CRI, as before) answers; and, counted by
// test/criproxy, they make no CRI List call while subscribed.
func TestSnapshotWithContainerd(t *testing.T) {
	c := crisetup.StartForTest(t)
	logs := t.TempDir()
	proxy, err := criproxy.Start(t.Context(), c.Socket, filepath.Join(t.TempDir(), "cri.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	configOf := func(socket string) string {
		return fmt.Sprintf(`{"endpoint":"unix://%s","timeouts":{"runtime":"60s","image":"60s"}}`, socket)
	}
	pod := func(sb *runtimev1.SandboxConfig) {
		sb.HostNetwork = true
		sb.LogDirectory = filepath.Join(logs, sb.GetMetadata().GetUid())
	}
	// ref lists CRI on every call: nobody follows its events.
	ref := connect(t, configOf(c.Socket))

	t.Run("lifecycle", func(t *testing.T) {
		rt, _ := connectQuiet(t, configOf(proxy.Path()))
		events := follow(t, rt)
		sb, sbCfg := runSandbox(t, rt, "snap", pod)
		cmp := comparer{t: t, rt: rt, ref: ref, proxy: proxy, sandbox: sb}
		cmp.check("run sandbox")

		id := create(t, rt, sb, sbCfg, runningCommand)
		cmp.check("create container")
		start(t, rt, id)
		cmp.check("start container")
		stopContainer(t, rt, id)
		cmp.check("stop container")
		removeContainer(t, rt, id)
		cmp.check("remove container")

		exits := create(t, rt, sb, sbCfg, []string{"sh", "-c", "exit 3"})
		start(t, rt, exits)
		events.waitFor(t, runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED, exits)
		if got := cmp.state(exits); got != runtimev1.ContainerState_CONTAINER_STATE_EXITED {
			t.Errorf("at its exit event: served %v; want EXITED", got)
		}
		// The exit is served from containerd's event, which may come
		// before CRI shows it; once CRI does, the two agree.
		criExited(t, c, exits)
		cmp.check("a container's own exit")

		other := createBehindItsBack(t, c, sb, sbCfg)
		events.waitFor(t, runtimev1.EventType_EVENT_TYPE_CONTAINER_CREATED, other)
		if got := cmp.state(other); got != runtimev1.ContainerState_CONTAINER_STATE_CREATED {
			t.Errorf("at its creation event: served %v; want CREATED", got)
		}
		cmp.check("a container made behind the plugin's back")

		running := create(t, rt, sb, sbCfg, runningCommand)
		start(t, rt, running)
		if _, err := rt.StopSandbox(callCtx(t), &runtimev1.StopSandboxRequest{SandboxId: sb}); err != nil {
			t.Fatalf("StopSandbox: %v", err)
		}
		cmp.check("stop sandbox (its running container killed)")
		if _, err := rt.RemoveSandbox(callCtx(t), &runtimev1.RemoveSandboxRequest{SandboxId: sb}); err != nil {
			t.Fatalf("RemoveSandbox: %v", err)
		}
		cmp.check("remove sandbox")
	})

	t.Run("listings while subscribed make no CRI List call", func(t *testing.T) {
		rt, r := connectQuiet(t, configOf(proxy.Path()))
		follow(t, rt)
		sb, sbCfg := runSandbox(t, rt, "count", pod)
		start(t, rt, create(t, rt, sb, sbCfg, runningCommand))
		waitQuiet(t, r)
		const n = 20
		if got := lists(t, proxy, rt, sb, n); got != 0 {
			t.Errorf("%d listings of each kind while subscribed: %d CRI List calls; want 0", n, got)
		}
		unsubscribed, _ := connectQuiet(t, configOf(proxy.Path()))
		if got := lists(t, proxy, unsubscribed, sb, n); got != 2*n {
			t.Errorf("%d listings of each kind without a subscriber: %d CRI List calls; want %d", n, got, 2*n)
		}
	})

	t.Run("a new endpoint", func(t *testing.T) {
		rt, r := connectQuiet(t, configOf(c.Socket))
		follow(t, rt)
		sb, sbCfg := runSandbox(t, rt, "endpoint", pod)
		start(t, rt, create(t, rt, sb, sbCfg, runningCommand))
		waitQuiet(t, r)
		subscribes := proxy.Calls()["Subscribe"]
		// The same containerd through the proxy: a new connection.
		if errs := r.Configure(t.Context(), []byte(configOf(proxy.Path()))); len(errs) > 0 {
			t.Fatalf("Configure: %v", errs)
		}
		if r.watch.servesNow() {
			t.Error("the snapshot of the old endpoint is served once Configure returned")
		}
		waitQuiet(t, r)
		if n := proxy.Calls()["Subscribe"] - subscribes; n < 1 {
			t.Errorf("%d subscriptions through the new endpoint; want at least 1", n)
		}
		cmp := comparer{t: t, rt: rt, ref: ref, proxy: proxy, sandbox: sb}
		cmp.check("after the endpoint changed")
	})

	// Last: it restarts containerd under the other subtests' feet. The
	// plugin talks to containerd directly: the proxy's own connection
	// would come back only after gRPC's back-off.
	t.Run("containerd restart", func(t *testing.T) {
		rt, r := connectQuiet(t, configOf(c.Socket))
		events := follow(t, rt)
		restartPod := func(sb *runtimev1.SandboxConfig) {
			pod(sb)
			sb.HostPid = true // terminate signals the container's process
		}
		sb, sbCfg := runSandbox(t, rt, "restart", restartPod)
		w := t.TempDir()
		gone := startContainer(t, rt, sb, sbCfg, signalled(w))
		startContainer(t, rt, sb, sbCfg, &runtimev1.ContainerConfig{Command: runningCommand})
		if err := c.Restart(callCtx(t), func() { terminate(t, w) }); err != nil {
			t.Fatalf("restart containerd: %v", err)
		}
		events.waitFor(t, runtimev1.EventType_EVENT_TYPE_CONTAINER_EXITED, gone)
		waitQuiet(t, r)
		cmp := comparer{t: t, rt: rt, ref: ref, sandbox: sb}
		if !r.watch.servesNow() {
			t.Fatal("after the restart and its resync: the snapshot is not served")
		}
		cmp.check("after containerd restarted")
	})
}

// connectQuiet is connect with no periodic resync during the test, so that
// CRI calls can be counted; it returns the plugin's logic too.
func connectQuiet(t *testing.T, config string) (runtimev1.RuntimeClient, *criRuntime) {
	p := testPlugin(t)
	r := p.Runtime.(*server).rt
	r.watch.resyncEvery = time.Hour
	if errs := p.Configure(t.Context(), []byte(config)); len(errs) > 0 {
		t.Fatalf("Configure: %v", errs)
	}
	return serve(t, p), r
}

// servesNow reports whether listings are served from the snapshot.
func (w *watcher) servesNow() bool {
	_, ok := w.sandboxes(SandboxFilter{})
	return ok
}

// waitQuiet waits until the watcher serves its snapshot and looks nothing
// up, so that the CRI calls that follow are the listings' own.
func waitQuiet(t *testing.T, r *criRuntime) {
	t.Helper()
	deadline := time.Now().Add(callTimeout)
	for {
		r.watch.mu.Lock()
		quiet := r.watch.run.current() && len(r.watch.run.work) == 0 && len(r.watch.inflight) == 0
		r.watch.mu.Unlock()
		if quiet {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watcher did not settle within %v", callTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lists makes n ListSandboxes and n ListContainers calls of the sandbox sb
// and returns how many CRI List calls reached containerd meanwhile.
func lists(t *testing.T, proxy *criproxy.Proxy, rt runtimev1.RuntimeClient, sb string, n int) int {
	t.Helper()
	before := proxy.Calls()
	for range n {
		if _, err := rt.ListSandboxes(callCtx(t), &runtimev1.ListSandboxesRequest{Filter: &runtimev1.SandboxFilter{Id: sb}}); err != nil {
			t.Fatalf("ListSandboxes: %v", err)
		}
		if _, err := rt.ListContainers(callCtx(t), &runtimev1.ListContainersRequest{Filter: &runtimev1.ContainerFilter{SandboxId: sb}}); err != nil {
			t.Fatalf("ListContainers: %v", err)
		}
	}
	after := proxy.Calls()
	return after["ListPodSandbox"] - before["ListPodSandbox"] + after["ListContainers"] - before["ListContainers"]
}

// comparer compares the listings rt serves with ref's, which come from CRI.
type comparer struct {
	t       *testing.T
	rt, ref runtimev1.RuntimeClient
	proxy   *criproxy.Proxy // when set, served listings must not reach CRI
	sandbox string
}

// check compares, field by field, the listings of a few filters: the test's
// sandboxes, the sandbox's containers and each of them by ID and by state.
func (c comparer) check(step string) {
	t := c.t
	t.Helper()
	var before map[string]int
	if c.proxy != nil {
		before = c.proxy.Calls()
	}
	sandboxFilters := []*runtimev1.SandboxFilter{
		{LabelSelector: map[string]string{"podhost.io/test": t.Name()}},
		{Id: c.sandbox},
		{Id: c.sandbox, State: runtimev1.SandboxState_SANDBOX_STATE_READY},
	}
	for _, f := range sandboxFilters {
		got, err := c.rt.ListSandboxes(callCtx(t), &runtimev1.ListSandboxesRequest{Filter: f})
		if err != nil {
			t.Fatalf("%s: ListSandboxes: %v", step, err)
		}
		want, err := c.ref.ListSandboxes(callCtx(t), &runtimev1.ListSandboxesRequest{Filter: f})
		if err != nil {
			t.Fatalf("%s: CRI's ListSandboxes: %v", step, err)
		}
		sameItems(t, step, fmt.Sprint("sandboxes ", f), byID(got.GetSandboxes()), byID(want.GetSandboxes()))
	}
	all, err := c.ref.ListContainers(callCtx(t), &runtimev1.ListContainersRequest{Filter: &runtimev1.ContainerFilter{SandboxId: c.sandbox}})
	if err != nil {
		t.Fatalf("%s: CRI's ListContainers: %v", step, err)
	}
	containerFilters := []*runtimev1.ContainerFilter{
		{SandboxId: c.sandbox},
		{SandboxId: c.sandbox, State: runtimev1.ContainerState_CONTAINER_STATE_RUNNING},
		{SandboxId: c.sandbox, State: runtimev1.ContainerState_CONTAINER_STATE_EXITED},
	}
	for _, ctr := range all.GetContainers() {
		containerFilters = append(containerFilters, &runtimev1.ContainerFilter{Id: ctr.GetId()})
	}
	for _, f := range containerFilters {
		got, err := c.rt.ListContainers(callCtx(t), &runtimev1.ListContainersRequest{Filter: f})
		if err != nil {
			t.Fatalf("%s: ListContainers: %v", step, err)
		}
		want, err := c.ref.ListContainers(callCtx(t), &runtimev1.ListContainersRequest{Filter: f})
		if err != nil {
			t.Fatalf("%s: CRI's ListContainers: %v", step, err)
		}
		sameItems(t, step, fmt.Sprint("containers ", f), byID(got.GetContainers()), byID(want.GetContainers()))
	}
	if c.proxy != nil {
		after := c.proxy.Calls()
		if n := after["ListPodSandbox"] - before["ListPodSandbox"] + after["ListContainers"] - before["ListContainers"]; n != 0 {
			t.Errorf("%s: the served listings made %d CRI List calls; want none", step, n)
		}
	}
}

// state is the state the served listing gives the container id.
func (c comparer) state(id string) runtimev1.ContainerState {
	c.t.Helper()
	resp, err := c.rt.ListContainers(callCtx(c.t), &runtimev1.ListContainersRequest{Filter: &runtimev1.ContainerFilter{Id: id}})
	if err != nil || len(resp.GetContainers()) != 1 {
		c.t.Fatalf("ListContainers %s: got %v, %v; want one", id, resp.GetContainers(), err)
	}
	return resp.GetContainers()[0].GetState()
}

type identified interface {
	proto.Message
	GetId() string
}

func byID[M identified](items []M) map[string]proto.Message {
	out := map[string]proto.Message{}
	for _, it := range items {
		out[it.GetId()] = it
	}
	return out
}

// sameItems compares two listings by ID, each item with proto.Equal.
func sameItems(t *testing.T, step, what string, got, want map[string]proto.Message) {
	t.Helper()
	for id, w := range want {
		if g, ok := got[id]; !ok {
			t.Errorf("%s: %s: %s missing; CRI lists %v", step, what, id, w)
		} else if !proto.Equal(g, w) {
			t.Errorf("%s: %s: %s served as %v; CRI lists %v", step, what, id, g, w)
		}
	}
	for id, g := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("%s: %s: %s served (%v); CRI does not list it", step, what, id, g)
		}
	}
}

// create creates a busybox container running command.
func create(t *testing.T, rt runtimev1.RuntimeClient, sandbox string, sbCfg *runtimev1.SandboxConfig, command []string) string {
	t.Helper()
	name := fmt.Sprintf("c%d", time.Now().UnixNano())
	resp, err := rt.CreateContainer(callCtx(t), &runtimev1.CreateContainerRequest{SandboxId: sandbox, SandboxConfig: sbCfg, Config: &runtimev1.ContainerConfig{
		Metadata: &runtimev1.ContainerMetadata{Name: name, Attempt: 1},
		Image:    localimages.BusyboxName, Command: command, LogPath: name + ".log",
		Labels:      map[string]string{"podhost.io/container": name},
		Annotations: map[string]string{"podhost.io/hash": "1"},
	}})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	return resp.GetContainerId()
}

func start(t *testing.T, rt runtimev1.RuntimeClient, id string) {
	t.Helper()
	if _, err := rt.StartContainer(callCtx(t), &runtimev1.StartContainerRequest{ContainerId: id}); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
}

// createBehindItsBack creates a container in the sandbox straight through
// CRI, as a client other than the plugin.
func createBehindItsBack(t *testing.T, c *crisetup.Containerd, sandbox string, sbCfg *runtimev1.SandboxConfig) string {
	t.Helper()
	resp, err := c.Runtime.CreateContainer(callCtx(t), &criapi.CreateContainerRequest{
		PodSandboxId:  sandbox,
		SandboxConfig: sandboxConfigToCRI(sandboxSpecFromProto(sbCfg)),
		Config: &criapi.ContainerConfig{
			Metadata: &criapi.ContainerMetadata{Name: "other"},
			Image:    &criapi.ImageSpec{Image: localimages.BusyboxName},
			Command:  []string{"true"},
			Labels:   map[string]string{"podhost.io/container": "other"},
			LogPath:  "other.log",
		},
	})
	if err != nil {
		t.Fatalf("CRI CreateContainer: %v", err)
	}
	return resp.GetContainerId()
}
