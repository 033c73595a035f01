package lifecycle_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// TestGeneratePodStatusSidecars checks the status of a pod with a sidecar
// (init container side, restartPolicy Always), the init container setup
// and the app container app, as the kubelet reports it: the pod is
// Pending until an app container ran; a running sidecar keeps it Running,
// an exited one does not count for the phase; the sidecar's readiness
// counts for ContainersReady and its start for Initialized.
func TestGeneratePodStatusSidecars(t *testing.T) {
	run, exited := runtimeRunning, runtimeExited
	type cond struct {
		status  v1.ConditionStatus
		message string
	}
	tests := []struct {
		name      string
		policy    v1.RestartPolicy
		rs        []lifecycle.ContainerStatus
		wantPhase v1.PodPhase
		want      map[v1.PodConditionType]cond
		// wantSide is the sidecar's ready and started.
		wantSide [2]bool
	}{
		{name: "sidecar running, init container next: Pending", rs: []lifecycle.ContainerStatus{run("side")}, wantPhase: v1.PodPending,
			want: map[v1.PodConditionType]cond{
				v1.PodInitialized:  {v1.ConditionFalse, "containers with incomplete status: [setup]"},
				v1.ContainersReady: {v1.ConditionFalse, "containers with unready status: [app]"}},
			wantSide: [2]bool{true, true}},
		{name: "sidecar and app running: Running, ready", rs: []lifecycle.ContainerStatus{run("side"), exited("setup", 0), run("app")}, wantPhase: v1.PodRunning,
			want: map[v1.PodConditionType]cond{
				v1.PodInitialized: {status: v1.ConditionTrue}, v1.ContainersReady: {status: v1.ConditionTrue}, v1.PodReady: {status: v1.ConditionTrue}},
			wantSide: [2]bool{true, true}},
		{name: "sidecar exited while the app runs: not ready, still initialized", rs: []lifecycle.ContainerStatus{exited("side", 1), exited("setup", 0), run("app")},
			wantPhase: v1.PodRunning,
			want: map[v1.PodConditionType]cond{
				v1.PodInitialized:  {status: v1.ConditionTrue},
				v1.ContainersReady: {v1.ConditionFalse, "containers with unready status: [side]"}}},
		{name: "app done under Never, sidecar still running: Running", policy: v1.RestartPolicyNever,
			rs: []lifecycle.ContainerStatus{run("side"), exited("setup", 0), exited("app", 0)}, wantPhase: v1.PodRunning, wantSide: [2]bool{true, true}},
		{name: "app done under Never, sidecar stopped: Succeeded whatever its exit code", policy: v1.RestartPolicyNever,
			rs: []lifecycle.ContainerStatus{exited("side", 137), exited("setup", 0), exited("app", 0)}, wantPhase: v1.PodSucceeded},
		{name: "app failed under Never, sidecar stopped: Failed", policy: v1.RestartPolicyNever,
			rs: []lifecycle.ContainerStatus{exited("side", 0), exited("setup", 0), exited("app", 1)}, wantPhase: v1.PodFailed},
		{name: "nothing started: Pending", wantPhase: v1.PodPending,
			want: map[v1.PodConditionType]cond{v1.PodInitialized: {v1.ConditionFalse, "containers with incomplete status: [side setup]"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := apiPod("1", "p")
			pod.Spec.InitContainers = []v1.Container{{Name: "side", RestartPolicy: ptrTo(v1.ContainerRestartPolicyAlways)}, {Name: "setup"}}
			pod.Spec.Containers = []v1.Container{{Name: "app"}}
			if tt.policy != "" {
				pod.Spec.RestartPolicy = tt.policy
			}
			rs := &lifecycle.PodStatus{ID: "1", SandboxReady: true, ContainerStatuses: tt.rs}
			got := lifecycle.GeneratePodStatus(pod, rs, v1.PodStatus{}, false, nil)
			if got.Phase != tt.wantPhase {
				t.Errorf("phase %s; want %s", got.Phase, tt.wantPhase)
			}
			for typ, want := range tt.want {
				var have v1.PodCondition
				for _, c := range got.Conditions {
					if c.Type == typ {
						have = c
					}
				}
				if have.Status != want.status || have.Message != want.message {
					t.Errorf("%s = %s %q; want %s %q", typ, have.Status, have.Message, want.status, want.message)
				}
			}
			side := got.InitContainerStatuses[0]
			if started := side.Started != nil && *side.Started; side.Ready != tt.wantSide[0] || started != tt.wantSide[1] {
				t.Errorf("sidecar ready %v started %v; want %v %v", side.Ready, started, tt.wantSide[0], tt.wantSide[1])
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
