package runtimemanager

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func restartAllRules() []v1.ContainerRestartRule {
	return []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
}

// restartAllPod is the upstream spec's pod under restartPolicy Never: the
// init container init, the sidecar side, the app containers source (whose
// exit 42 restarts all) and regular.
func restartAllPod() *v1.Pod {
	pod := withPolicy(withInits(newPod("ra", "source", "regular"), "init", "side"), v1.RestartPolicyNever)
	pod.Spec.InitContainers[1].RestartPolicy = ptr(v1.ContainerRestartPolicyAlways)
	pod.Spec.Containers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
	pod.Spec.Containers[0].RestartPolicyRules = restartAllRules()
	return pod
}

// syncUntil syncs until every named container's newest instance runs.
func (e *env) syncUntilRunning(pod *v1.Pod, names ...string) {
	e.t.Helper()
	for range 10 {
		e.mustSync(pod)
		st := e.status(pod)
		all := true
		for _, n := range names {
			if c := st.Container(n); c == nil || c.State != lifecycle.ContainerRunning {
				all = false
			}
		}
		if all {
			return
		}
		e.clock.Step(time.Second)
	}
	e.t.Fatalf("%v not all running: %+v", names, e.status(pod))
}

// TestRestartAllContainers runs the upstream spec's pod through one
// RestartAllContainers: source exits 42, the running containers are
// stopped, the pod starts again from its first init container in the same
// sandbox, every container runs again with one restart more, and the
// stopped ones (regular's rule does not match 137/0) start nothing more.
func TestRestartAllContainers(t *testing.T) {
	e := newEnv(t)
	pod := restartAllPod()
	e.mustSync(pod)
	e.exit(pod, "init", 0)
	e.syncUntilRunning(pod, "side", "source", "regular")
	sandboxes := e.count("RunSandbox")

	e.exit(pod, "source", 42)
	e.clock.Step(time.Second)
	st := e.status(pod)
	if c := st.Container("source"); c.ResetByRestartAll {
		t.Fatalf("source marked reset before the run ended: %+v", c)
	}
	e.mustSync(pod)
	for _, call := range e.fake.Calls() {
		if req, ok := call.Req.(*runtimev1.StopContainerRequest); ok && req.GetTimeoutSeconds() != restartAllGrace {
			t.Errorf("StopContainer with %d s; want %d", req.GetTimeoutSeconds(), restartAllGrace)
		}
	}
	st = e.status(pod)
	if c := st.Container("init"); c.State != lifecycle.ContainerRunning || c.RestartCount != 1 || c.ResetByRestartAll {
		t.Fatalf("init after the run ended: %+v; want running again, restart 1", c)
	}
	for _, n := range []string{"side", "source", "regular"} {
		if c := st.Container(n); c.State != lifecycle.ContainerExited || !c.ResetByRestartAll {
			t.Errorf("%s: %+v; want exited and marked reset", n, c)
		}
	}
	// Nothing but the init phase runs until init succeeded again.
	e.mustSync(pod)
	if c := e.status(pod).Container("source"); !c.ResetByRestartAll {
		t.Fatalf("source started before the init containers: %+v", c)
	}
	e.exit(pod, "init", 0)
	e.syncUntilRunning(pod, "side", "source", "regular")
	st = e.status(pod)
	for _, n := range []string{"init", "side", "source", "regular"} {
		if c := st.Container(n); c.RestartCount != 1 || c.ResetByRestartAll {
			t.Errorf("%s: %+v; want restart count 1, in the new run", n, c)
		}
	}
	if got := e.count("RunSandbox"); got != sandboxes {
		t.Errorf("RunSandbox calls %d; want %d: the same sandbox", got, sandboxes)
	}
	// A second exit 42 restarts all again; a run never ends twice.
	e.exit(pod, "source", 42)
	e.mustSync(pod)
	e.mustSync(pod)
	if c := e.status(pod).Container("init"); c.RestartCount != 2 {
		t.Errorf("init restart count %d after the second RestartAllContainers; want 2", c.RestartCount)
	}
}

// TestRestartAllFromInitContainer: an init container exiting 42 under a
// RestartAllContainers rule in a Never pod restarts the sidecar before it
// and itself, rather than failing the pod; exit 1 fails it.
func TestRestartAllFromInitContainer(t *testing.T) {
	e := newEnv(t)
	pod := withPolicy(withInits(newPod("ri", "app"), "side", "init"), v1.RestartPolicyNever)
	pod.Spec.InitContainers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyAlways)
	pod.Spec.InitContainers[1].RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
	pod.Spec.InitContainers[1].RestartPolicyRules = restartAllRules()
	e.syncUntilRunning(pod, "side", "init")
	e.exit(pod, "init", 42)
	e.mustSync(pod)
	st := e.status(pod)
	if c := st.Container("side"); c.State != lifecycle.ContainerRunning || c.RestartCount != 1 {
		t.Fatalf("side: %+v; want running again, restart 1", c)
	}
	e.syncUntilRunning(pod, "side", "init")
	if c := e.status(pod).Container("init"); c.RestartCount != 1 {
		t.Errorf("init restart count %d; want 1", c.RestartCount)
	}
	e.exit(pod, "init", 1)
	now := epoch.Add(time.Hour)
	a := computeActions(pod, mustState(t, e, pod), now, nil, nil)
	if !a.initFailed {
		t.Errorf("exit 1 under Never: %s; want initfailed", summary(a))
	}
}

func mustState(t *testing.T, e *env, pod *v1.Pod) *podState {
	t.Helper()
	st, err := e.m.podState(t.Context(), pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRestartAllRunsProperty drives the upstream spec's pod through random
// syncs, exits (42 among them, which restarts all) and clock steps, and
// checks after every sync, in the newest sandbox:
//   - nothing of an ended run runs: the sync that ended it stopped it all;
//   - within a run, an app container exists only once the init container
//     init of that run exited 0: every run starts from the init containers;
//   - a container's attempts only grow, across runs: its newest instance
//     has the highest restart count of its name.
func TestRestartAllRunsProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := newEnv(t)
		pod := restartAllPod()
		if rapid.Bool().Draw(rt, "rule on init") {
			pod.Spec.InitContainers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyNever)
			pod.Spec.InitContainers[0].RestartPolicyRules = restartAllRules()
		}
		ctx := t.Context()
		for range rapid.IntRange(1, 30).Draw(rt, "steps") {
			switch rapid.SampledFrom([]string{"sync", "sync", "exit", "tick"}).Draw(rt, "action") {
			case "sync":
				e.clock.Step(time.Millisecond) // distinct creation times across syncs
				_ = e.m.SyncPod(ctx, pod, nil)
				checkRuns(rt, e)
			case "exit":
				var live []*runtimev1.Container
				for _, c := range e.fake.Containers() {
					if c.GetState() == runtimev1.ContainerState_CONTAINER_STATE_RUNNING {
						live = append(live, c)
					}
				}
				if len(live) > 0 {
					c := rapid.SampledFrom(live).Draw(rt, "container")
					e.fake.ExitContainer(c.GetId(), rapid.SampledFrom([]int32{0, 1, 42, 137}).Draw(rt, "code"))
				}
			case "tick":
				e.clock.Step(BackOffInitial)
			}
		}
	})
}

func checkRuns(rt *rapid.T, e *env) {
	sbs := e.fake.Sandboxes()
	if len(sbs) == 0 {
		return
	}
	newest := sbs[0]
	for _, sb := range sbs {
		if sb.GetCreatedAt() > newest.GetCreatedAt() {
			newest = sb
		}
	}
	var cs []*runtimev1.Container
	var current uint32
	for _, c := range e.fake.Containers() {
		if c.GetSandboxId() == newest.GetId() {
			cs = append(cs, c)
			current = max(current, runOf(c.GetAnnotations()))
		}
	}
	initDone := map[uint32]bool{}
	newestAttempt := map[string]*runtimev1.Container{}
	highest := map[string]uint32{}
	for _, c := range cs {
		run, name := runOf(c.GetAnnotations()), c.GetLabels()[LabelContainerName]
		if run < current && c.GetState() == runtimev1.ContainerState_CONTAINER_STATE_RUNNING {
			rt.Fatalf("%s of the ended run %d runs in run %d", name, run, current)
		}
		if name == "init" && c.GetState() == runtimev1.ContainerState_CONTAINER_STATE_EXITED && c.GetExitCode() == 0 {
			initDone[run] = true
		}
		if n := newestAttempt[name]; n == nil || c.GetCreatedAt() > n.GetCreatedAt() {
			newestAttempt[name] = c
		}
		highest[name] = max(highest[name], c.GetMetadata().GetAttempt())
	}
	for _, c := range cs {
		run, name := runOf(c.GetAnnotations()), c.GetLabels()[LabelContainerName]
		if (name == "source" || name == "regular") && !initDone[run] {
			rt.Fatalf("%s exists in run %d before init succeeded in it", name, run)
		}
	}
	for name, c := range newestAttempt {
		if c.GetMetadata().GetAttempt() != highest[name] {
			rt.Fatalf("%s: newest instance has attempt %d, an older one %d", name, c.GetMetadata().GetAttempt(), highest[name])
		}
	}
}
