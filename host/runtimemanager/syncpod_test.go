package runtimemanager

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/runtimemanager/runtimetestfake"
	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func TestSyncPodStartsSandboxThenContainers(t *testing.T) {
	e := newEnv(t)
	pod := newPod("web", "app", "sidecar")
	pod.Spec.Containers[0].Command = []string{"/bin/sh", "-c"}
	pod.Spec.Containers[0].Args = []string{"echo $(GREETING) $$(HOME)"}
	pod.Spec.Containers[0].Env = []v1.EnvVar{{Name: "GREETING", Value: "hi"}, {Name: "POD", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	pod.Spec.Containers[0].WorkingDir = "/srv"
	e.mustSync(pod)

	var methods []string
	for _, c := range e.fake.Calls() {
		switch c.Method {
		case "RunSandbox", "CreateContainer", "StartContainer":
			methods = append(methods, c.Method)
		}
	}
	want := []string{"RunSandbox", "CreateContainer", "StartContainer", "CreateContainer", "StartContainer"}
	if !slices.Equal(methods, want) {
		t.Fatalf("calls: got %v; want %v", methods, want)
	}
	st := e.status(pod)
	if !st.SandboxReady || len(st.ContainerStatuses) != 2 || len(st.IPs) != 1 {
		t.Fatalf("status: got %+v; want a ready sandbox with an IP and two containers", st)
	}
	for _, c := range st.ContainerStatuses {
		if c.State != lifecycle.ContainerRunning || c.RestartCount != 0 {
			t.Errorf("container %s: got %s restarts %d; want running, 0", c.Name, c.State, c.RestartCount)
		}
	}
	var create *runtimev1.CreateContainerRequest
	for _, c := range e.fake.Calls() {
		if r, ok := c.Req.(*runtimev1.CreateContainerRequest); ok && r.GetConfig().GetMetadata().GetName() == "app" {
			create = r
		}
	}
	cfg := create.GetConfig()
	if got := cfg.GetArgs(); !slices.Equal(got, []string{"echo hi $(HOME)"}) {
		t.Errorf("args: got %q", got)
	}
	if cfg.GetWorkingDir() != "/srv" || !slices.Equal(cfg.GetCommand(), []string{"/bin/sh", "-c"}) {
		t.Errorf("command/workdir: got %q %q", cfg.GetCommand(), cfg.GetWorkingDir())
	}
	if env := cfg.GetEnvs(); len(env) != 2 || env[1].GetKey() != "POD" || env[1].GetValue() != "web" {
		t.Errorf("env: got %v", env)
	}
	if cfg.GetLogPath() != filepath.Join("app", "0.log") {
		t.Errorf("log path: got %q", cfg.GetLogPath())
	}
	if got, want := create.GetSandboxConfig().GetLogDirectory(), filepath.Join(e.root, "pods", "default_web_uid-web"); got != want {
		t.Errorf("log directory: got %q; want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(e.root, "pods", "default_web_uid-web", "app")); err != nil {
		t.Errorf("container log directory: %v", err)
	}
	labels := cfg.GetLabels()
	if labels[LabelPodUID] != "uid-web" || labels[LabelContainerName] != "app" || labels[LabelPodName] != "web" || labels[LabelPodNamespace] != "default" {
		t.Errorf("labels: got %v", labels)
	}
	if a := cfg.GetAnnotations(); a[AnnotationContainerHash] != specHash(&pod.Spec.Containers[0]) || a[AnnotationRestartCount] != "0" {
		t.Errorf("annotations: got %v", a)
	}

	// A second sync changes nothing.
	before := len(e.fake.Calls())
	e.mustSync(pod)
	for _, c := range e.fake.Calls()[before:] {
		if c.Method != "ListSandboxes" && c.Method != "ListContainers" {
			t.Errorf("second sync called %s; want only lists", c.Method)
		}
	}
}

func TestSyncPodInitContainersInOrder(t *testing.T) {
	e := newEnv(t)
	pod := withInits(newPod("init", "app"), "first", "second")
	started := func() []string {
		var names []string
		for _, c := range e.status(pod).ContainerStatuses {
			names = append(names, c.Name)
		}
		slices.Sort(names)
		return names
	}
	e.mustSync(pod)
	e.mustSync(pod) // the first init still runs: nothing new
	if got := started(); !slices.Equal(got, []string{"first"}) {
		t.Fatalf("after the first sync: got %v; want only the first init container", got)
	}
	e.exit(pod, "first", 0)
	e.mustSync(pod)
	if got := started(); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("after the first init: got %v", got)
	}
	e.exit(pod, "second", 0)
	e.mustSync(pod)
	if got := started(); !slices.Equal(got, []string{"app", "first", "second"}) {
		t.Fatalf("after both inits: got %v", got)
	}
	if e.container(pod, "app").State != lifecycle.ContainerRunning {
		t.Error("app container is not running")
	}
}

func TestSyncPodFailedInitBlocksApp(t *testing.T) {
	for _, tt := range []struct {
		policy      v1.RestartPolicy
		wantRestart bool
	}{{v1.RestartPolicyNever, false}, {v1.RestartPolicyOnFailure, true}, {v1.RestartPolicyAlways, true}} {
		t.Run(string(tt.policy), func(t *testing.T) {
			e := newEnv(t)
			pod := withPolicy(withInits(newPod("init", "app"), "setup"), tt.policy)
			e.mustSync(pod)
			e.exit(pod, "setup", 1)
			e.clock.Step(BackOffInitial)
			e.mustSync(pod)
			st := e.status(pod)
			if st.Container("app") != nil {
				t.Fatal("app container created after a failed init container")
			}
			restarted := e.container(pod, "setup").RestartCount == 1
			if restarted != tt.wantRestart {
				t.Errorf("init restarted: got %v; want %v", restarted, tt.wantRestart)
			}
		})
	}
}

func TestSyncPodRestartPolicies(t *testing.T) {
	tests := []struct {
		policy      v1.RestartPolicy
		exitCode    int32
		wantRestart bool
	}{
		{v1.RestartPolicyAlways, 0, true},
		{v1.RestartPolicyAlways, 1, true},
		{v1.RestartPolicyOnFailure, 0, false},
		{v1.RestartPolicyOnFailure, 2, true},
		{v1.RestartPolicyNever, 0, false},
		{v1.RestartPolicyNever, 1, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy)+"/exit"+string(rune('0'+tt.exitCode)), func(t *testing.T) {
			e := newEnv(t)
			pod := withPolicy(newPod("p", "app"), tt.policy)
			e.mustSync(pod)
			e.exit(pod, "app", tt.exitCode)
			e.clock.Step(BackOffInitial)
			err := e.sync(pod)
			if err != nil {
				t.Fatalf("SyncPod: %v", err)
			}
			c := e.container(pod, "app")
			if got := c.RestartCount == 1 && c.State == lifecycle.ContainerRunning; got != tt.wantRestart {
				t.Errorf("restarted: got %v (%+v); want %v", got, c, tt.wantRestart)
			}
			if tt.wantRestart {
				if got := e.fake.Containers()[1].GetLogPath(); filepath.Base(got) != "1.log" {
					t.Errorf("restarted container log path: got %q; want …/app/1.log", got)
				}
			}
		})
	}
}

func TestSyncPodCrashLoopBackOff(t *testing.T) {
	e := newEnv(t)
	pod := newPod("crash", "app")
	e.mustSync(pod)
	for i, delay := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
		e.exit(pod, "app", 1)
		err := e.sync(pod)
		var boe *BackOffError
		if !errors.As(err, &boe) || !errors.Is(err, ErrCrashLoopBackOff) {
			t.Fatalf("restart %d: SyncPod error = %v; want a back-off error", i+1, err)
		}
		if boe.Delay != delay || boe.RetryAfter() != delay {
			t.Fatalf("restart %d: back-off %v (retry after %v); want %v", i+1, boe.Delay, boe.RetryAfter(), delay)
		}
		if r, ok := e.reasons.Get(pod.UID, "app"); !ok || r.Reason != ReasonCrashLoopBackOff {
			t.Errorf("restart %d: reason %+v, %v; want CrashLoopBackOff", i+1, r, ok)
		}
		e.clock.Step(delay - time.Second)
		if err := e.sync(pod); !errors.Is(err, ErrCrashLoopBackOff) {
			t.Fatalf("restart %d one second early: got %v; want still in back-off", i+1, err)
		}
		if got := e.container(pod, "app").RestartCount; got != int32(i) {
			t.Fatalf("restart %d: restarted during back-off (count %d)", i+1, got)
		}
		e.clock.Step(time.Second)
		e.mustSync(pod)
		if c := e.container(pod, "app"); c.RestartCount != int32(i+1) || c.State != lifecycle.ContainerRunning {
			t.Fatalf("restart %d: got %+v; want running with restart count %d", i+1, c, i+1)
		}
		if _, ok := e.reasons.Get(pod.UID, "app"); ok {
			t.Errorf("restart %d: reason kept after a successful start", i+1)
		}
	}
	// Ten minutes of running resets the back-off to its first step.
	e.clock.Step(BackOffReset)
	e.exit(pod, "app", 1)
	var boe *BackOffError
	if err := e.sync(pod); !errors.As(err, &boe) || boe.Delay != BackOffInitial {
		t.Fatalf("after a long run: got %v; want a back-off of %v", err, BackOffInitial)
	}
}

func TestSyncPodSpecChangeRestarts(t *testing.T) {
	e := newEnv(t)
	pod := newPod("hash", "app")
	e.mustSync(pod)
	old := e.container(pod, "app").ID
	pod.Spec.Containers[0].Image = "busybox:1.37"
	e.mustSync(pod)
	c := e.container(pod, "app")
	if c.ID == old || c.RestartCount != 1 || c.State != lifecycle.ContainerRunning {
		t.Fatalf("after a spec change: got %+v; want a new running container with restart count 1", c)
	}
	for _, s := range e.status(pod).ContainerStatuses {
		if s.ID == old && s.State != lifecycle.ContainerExited {
			t.Errorf("old container is %s; want exited", s.State)
		}
	}
}

func TestSyncPodRecreatesDeadSandbox(t *testing.T) {
	e := newEnv(t)
	pod := withInits(newPod("sb", "app"), "setup")
	e.mustSync(pod)
	e.exit(pod, "setup", 0)
	e.mustSync(pod)
	first := e.fake.Sandboxes()[0].GetId()
	e.fake.KillSandbox(first)
	e.mustSync(pod)
	sbs := e.fake.Sandboxes()
	if len(sbs) != 2 || sbs[1].GetMetadata().GetAttempt() != 1 || sbs[1].GetState() != runtimev1.SandboxState_SANDBOX_STATE_READY {
		t.Fatalf("sandboxes: got %v; want the old one and a ready one with attempt 1", sbs)
	}
	// Init containers run again, first, in the new sandbox.
	if c := e.container(pod, "setup"); c.State != lifecycle.ContainerRunning || c.RestartCount != 1 {
		t.Fatalf("setup in the new sandbox: got %+v", c)
	}
	if c := e.container(pod, "app"); c.State != lifecycle.ContainerExited {
		t.Fatalf("app before the init finished: got %+v; want the old, exited one", c)
	}
	e.exit(pod, "setup", 0)
	e.mustSync(pod)
	if c := e.container(pod, "app"); c.State != lifecycle.ContainerRunning || c.RestartCount != 1 {
		t.Fatalf("app in the new sandbox: got %+v", c)
	}
	if !e.status(pod).SandboxReady {
		t.Error("status: the newest sandbox is ready but SandboxReady is false")
	}
}

func TestSyncPodNeverPolicyGetsNoNewSandbox(t *testing.T) {
	e := newEnv(t)
	pod := withPolicy(newPod("never", "app"), v1.RestartPolicyNever)
	e.mustSync(pod)
	e.fake.KillSandbox(e.fake.Sandboxes()[0].GetId())
	e.mustSync(pod)
	if n := e.count("RunSandbox"); n != 1 {
		t.Errorf("RunSandbox calls: got %d; want 1", n)
	}
}

func TestSyncPodNetworkNotReady(t *testing.T) {
	e := newEnv(t)
	e.fake.SetNetworkReady(false)
	pod := newPod("net", "app")
	if err := e.sync(pod); !errors.Is(err, lifecycle.ErrNetworkNotReady) {
		t.Fatalf("SyncPod: got %v; want ErrNetworkNotReady", err)
	}
	if n := e.count("RunSandbox"); n != 0 {
		t.Fatalf("RunSandbox calls: got %d; want 0", n)
	}
	host := newPod("hostnet", "app")
	host.Spec.HostNetwork = true
	e.mustSync(host)
	if len(e.status(host).IPs) != 0 {
		t.Error("host-network pod got a pod IP")
	}
}

func TestSyncPodStartsNothingAfterCancel(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Termination arrives right after a container was created: the
	// CreateContainer call succeeds, then ctx is done.
	starts := new(atomic.Int32)
	e.m.rt = cancelAfterCreate{RuntimeClient: e.client, cancel: cancel, starts: starts}
	pod := newPod("cancel", "app", "two")
	err := e.m.SyncPod(ctx, pod, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("SyncPod: got %v; want context.Canceled", err)
	}
	if n := e.count("CreateContainer"); n != 1 {
		t.Fatalf("CreateContainer calls: got %d; want 1", n)
	}
	// Counted on the client side: gRPC itself refuses to send a call on
	// a done context, so the server would never see one either way.
	if n := starts.Load(); n != 0 {
		t.Fatalf("StartContainer calls after cancel: got %d; want 0", n)
	}
	// The created container is stopped by KillPod like any other.
	e.m.rt = e.client
	if err := e.m.KillPod(context.Background(), pod, nil, 5); err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	if e.status(pod).HasRunning() {
		t.Error("something runs after KillPod")
	}
}

// cancelAfterCreate cancels the sync's context once CreateContainer
// returned successfully.
type cancelAfterCreate struct {
	runtimev1.RuntimeClient
	cancel context.CancelFunc
	starts *atomic.Int32
}

func (c cancelAfterCreate) StartContainer(ctx context.Context, req *runtimev1.StartContainerRequest, opts ...grpc.CallOption) (*runtimev1.StartContainerResponse, error) {
	c.starts.Add(1)
	return c.RuntimeClient.StartContainer(ctx, req, opts...)
}

func (c cancelAfterCreate) CreateContainer(ctx context.Context, req *runtimev1.CreateContainerRequest, opts ...grpc.CallOption) (*runtimev1.CreateContainerResponse, error) {
	resp, err := c.RuntimeClient.CreateContainer(ctx, req, opts...)
	c.cancel()
	return resp, err
}

func TestSyncPodNoDuplicateSandboxAfterUncertainError(t *testing.T) {
	e := newEnv(t)
	failed := false
	e.fake.After = func(_ context.Context, method string, _ proto.Message, err error) error {
		if method == "RunSandbox" && err == nil && !failed {
			failed = true
			return runtimetestfake.DeadlineExceeded() // created, but the host cannot know
		}
		return err
	}
	pod := newPod("uncertain", "app")
	err := e.sync(pod)
	if !errors.Is(err, ErrUncertain) {
		t.Fatalf("first SyncPod: got %v; want ErrUncertain", err)
	}
	e.mustSync(pod)
	e.mustSync(pod)
	if n := len(e.fake.Sandboxes()); n != 1 {
		t.Fatalf("sandboxes: got %d; want 1", n)
	}
	if n := e.count("RunSandbox"); n != 1 {
		t.Fatalf("RunSandbox calls: got %d; want 1", n)
	}
	if c := e.container(pod, "app"); c.State != lifecycle.ContainerRunning {
		t.Fatalf("app: got %+v; want running", c)
	}
}

func TestSyncPodStartsContainerCreatedByUncertainCall(t *testing.T) {
	e := newEnv(t)
	failed := false
	e.fake.After = func(_ context.Context, method string, _ proto.Message, err error) error {
		if method == "CreateContainer" && err == nil && !failed {
			failed = true
			return runtimetestfake.DeadlineExceeded()
		}
		return err
	}
	pod := newPod("created", "app")
	if err := e.sync(pod); !errors.Is(err, ErrUncertain) {
		t.Fatalf("first SyncPod: got %v; want ErrUncertain", err)
	}
	e.mustSync(pod)
	if n := len(e.fake.Containers()); n != 1 {
		t.Fatalf("containers: got %d; want 1 (the created one started, not a second)", n)
	}
	if c := e.container(pod, "app"); c.State != lifecycle.ContainerRunning || c.RestartCount != 0 {
		t.Fatalf("app: got %+v", c)
	}
}

func TestAdoptionAfterHostRestart(t *testing.T) {
	e := newEnv(t)
	pod := withInits(newPod("adopt", "app", "side"), "setup")
	e.mustSync(pod)
	e.exit(pod, "setup", 0)
	e.mustSync(pod)
	e.exit(pod, "side", 1)
	e.clock.Step(BackOffInitial)
	e.mustSync(pod) // side restarted once
	before := e.status(pod)

	e.m = e.newManager() // the host restarts
	calls := len(e.fake.Calls())
	e.mustSync(pod)
	for _, c := range e.fake.Calls()[calls:] {
		if c.Method != "ListSandboxes" && c.Method != "ListContainers" {
			t.Errorf("sync after restart called %s; want only lists", c.Method)
		}
	}
	after := e.status(pod)
	for _, name := range []string{"setup", "app", "side"} {
		b, a := before.Container(name), after.Container(name)
		if a.ID != b.ID || a.RestartCount != b.RestartCount || a.State != b.State {
			t.Errorf("%s: before %+v, after %+v; want unchanged", name, b, a)
		}
	}
	if after.Container("side").RestartCount != 1 {
		t.Errorf("side restart count: got %d; want 1", after.Container("side").RestartCount)
	}
	pods, err := e.m.ListPods(context.Background())
	if err != nil || len(pods) != 1 || pods[0].ID != pod.UID || pods[0].Name != "adopt" || pods[0].Namespace != "default" || !pods[0].SandboxReady {
		t.Fatalf("ListPods: got %+v, %v", pods, err)
	}
}

func TestImagePullPolicy(t *testing.T) {
	e := newEnv(t)
	pod := newPod("img", "app")
	pod.Spec.Containers[0].Image = "registry.podhost.invalid/none:1"
	err := e.sync(pod)
	if !errors.Is(err, ErrImagePull) || !errors.Is(err, ErrNotFound) {
		t.Fatalf("SyncPod with an absent image: got %v", err)
	}
	if r, ok := e.reasons.Get(pod.UID, "app"); !ok || r.Reason != ReasonErrImagePull {
		t.Errorf("reason: got %+v", r)
	}
	pod.Spec.Containers[0].Image = "busybox:1.36"
	pod.Spec.Containers[0].ImagePullPolicy = v1.PullNever
	if err := e.sync(pod); !errors.Is(err, ErrImagePull) {
		t.Fatalf("PullNever of an absent image: got %v", err)
	}
	var policy runtimev1.PullPolicy
	for _, c := range e.fake.Calls() {
		if r, ok := c.Req.(*runtimev1.EnsureImageRequest); ok {
			policy = r.GetPullPolicy()
		}
	}
	if policy != runtimev1.PullPolicy_PULL_POLICY_NEVER {
		t.Errorf("pull policy sent: got %v", policy)
	}
}
