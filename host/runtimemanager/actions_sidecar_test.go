package runtimemanager

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// sidecarPod has the init containers side (restartPolicy Always, with a
// startup probe) and init, then the app container app.
func sidecarPod(policy v1.RestartPolicy) *v1.Pod {
	pod := withPolicy(withInits(newPod("p", "app"), "side", "init"), policy)
	pod.Spec.InitContainers[0].RestartPolicy = ptr(v1.ContainerRestartPolicyAlways)
	pod.Spec.InitContainers[0].StartupProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	return pod
}

// TestComputeActionsSidecars checks the kubelet's rules for restartable
// init containers: one starts in its place among the init containers, the
// next init container starts only once its startup probe succeeded, it is
// restarted whatever the pod's restart policy (with back-off), also after
// the init phase, and it is stopped once no app container runs or will
// run again.
func TestComputeActionsSidecars(t *testing.T) {
	now := epoch
	ready := []sandboxInfo{{id: "s1", ready: true, createdAt: now.Add(-time.Hour)}}
	long := now.Add(-time.Hour)
	always, never, onFailure := sidecarPod(v1.RestartPolicyAlways), sidecarPod(v1.RestartPolicyNever), sidecarPod(v1.RestartPolicyOnFailure)
	noProbe := sidecarPod(v1.RestartPolicyAlways)
	noProbe.Spec.InitContainers[0].StartupProbe = nil
	changed := sidecarPod(v1.RestartPolicyAlways)
	changed.Spec.InitContainers[0].Image = "other:2"
	run := func(p *v1.Pod, name string) containerInfo {
		return ctr(p, name, "s1", lifecycle.ContainerRunning, 0, 0, now)
	}
	done := func(p *v1.Pod, name string, code int32) containerInfo {
		return ctr(p, name, "s1", lifecycle.ContainerExited, code, 0, long)
	}

	tests := []struct {
		name    string
		pod     *v1.Pod
		cs      func(p *v1.Pod) []containerInfo
		started bool // the sidecar's startup probe succeeded
		prev    map[string]backOffEntry
		want    string
	}{
		{name: "new pod starts the sidecar first", pod: always, want: "sandbox start:side/0"},
		{name: "running sidecar not started yet holds the next init container", pod: always,
			cs: func(p *v1.Pod) []containerInfo { return []containerInfo{run(p, "side")} }, want: ""},
		{name: "started sidecar lets the next init container start", pod: always, started: true,
			cs: func(p *v1.Pod) []containerInfo { return []containerInfo{run(p, "side")} }, want: "start:init/0"},
		{name: "sidecar without a startup probe has started once running", pod: noProbe,
			cs: func(p *v1.Pod) []containerInfo { return []containerInfo{run(p, "side")} }, want: "start:init/0"},
		{name: "app container starts next to the running sidecar", pod: always, started: true,
			cs: func(p *v1.Pod) []containerInfo { return []containerInfo{done(p, "init", 0), run(p, "side")} }, want: "start:app/0"},
		{name: "all running: nothing to do", pod: always, started: true,
			cs: func(p *v1.Pod) []containerInfo {
				return []containerInfo{run(p, "app"), done(p, "init", 0), run(p, "side")}
			}, want: ""},
		{name: "sidecar that exited during init is restarted, the init container keeps running", pod: always,
			cs: func(p *v1.Pod) []containerInfo { return []containerInfo{run(p, "init"), done(p, "side", 0)} }, want: "start:side/1"},
		{name: "sidecar that exited after init is restarted under Never", pod: never,
			cs: func(p *v1.Pod) []containerInfo {
				return []containerInfo{run(p, "app"), done(p, "init", 0), done(p, "side", 1)}
			}, want: "start:side/1"},
		{name: "sidecar that just crashed waits out its back-off", pod: always,
			cs: func(p *v1.Pod) []containerInfo {
				return []containerInfo{run(p, "app"), done(p, "init", 0), ctr(p, "side", "s1", lifecycle.ContainerExited, 1, 0, now.Add(-time.Second))}
			}, want: "wait:side/10s"},
		{name: "sidecar removed after init is started again", pod: always,
			cs: func(p *v1.Pod) []containerInfo { return []containerInfo{run(p, "app")} }, want: "start:side/0"},
		{name: "sidecar in unknown state is killed and started again", pod: always,
			cs: func(p *v1.Pod) []containerInfo {
				return []containerInfo{run(p, "app"), done(p, "init", 0), ctr(p, "side", "s1", lifecycle.ContainerUnknown, 0, 0, now)}
			}, want: "kill:side start:side/1"},
		{name: "sidecar whose spec changed is restarted", pod: changed, started: true,
			cs: func(*v1.Pod) []containerInfo {
				return []containerInfo{run(always, "app"), done(always, "init", 0), run(always, "side")}
			}, want: "kill:side start:side/1"},
		{name: "app container done under Never: the sidecar is stopped", pod: never, started: true,
			cs: func(p *v1.Pod) []containerInfo {
				return []containerInfo{done(p, "app", 0), done(p, "init", 0), run(p, "side")}
			}, want: "kill:side"},
		{name: "app container done under Never: an exited sidecar stays down", pod: never,
			cs: func(p *v1.Pod) []containerInfo {
				return []containerInfo{done(p, "app", 1), done(p, "init", 0), done(p, "side", 137)}
			}, want: ""},
		{name: "failed app container restarts under OnFailure, the sidecar keeps running", pod: onFailure, started: true,
			cs: func(p *v1.Pod) []containerInfo {
				return []containerInfo{done(p, "app", 1), done(p, "init", 0), run(p, "side")}
			}, want: "start:app/1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &podState{uid: tt.pod.UID}
			if tt.cs != nil {
				st.sandboxes = ready
				st.containers = tt.cs(tt.pod)
			}
			started := func(name, id string) bool { return tt.started }
			got := summary(computeActions(tt.pod, st, now, tt.prev, started))
			if got != tt.want {
				t.Errorf("computeActions = %q; want %q", got, tt.want)
			}
		})
	}
}
