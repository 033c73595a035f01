package lifecycle_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// runtimeRunning and runtimeExited are the runtime's status of a
// container that runs, or exited with code.
func runtimeRunning(name string) lifecycle.ContainerStatus {
	return lifecycle.ContainerStatus{ID: name + "-id", Name: name, State: lifecycle.ContainerRunning}
}

func runtimeExited(name string, code int32) lifecycle.ContainerStatus {
	return lifecycle.ContainerStatus{ID: name + "-id", Name: name, State: lifecycle.ContainerExited, ExitCode: code}
}

// TestGeneratePodStatusConditions checks the kubelet's conditions of a
// generated status: PodReadyToStartContainers from the sandbox,
// Initialized from the init containers, ContainersReady and Ready from the
// containers (and Ready from the readiness gates), with the kubelet's
// reasons and messages when False.
func TestGeneratePodStatusConditions(t *testing.T) {
	run, exited := runtimeRunning, runtimeExited
	type cond struct {
		status          v1.ConditionStatus
		reason, message string
	}
	tests := []struct {
		name    string
		init    []string
		gates   []string
		api     []v1.PodCondition
		policy  v1.RestartPolicy
		sandbox bool
		rs      []lifecycle.ContainerStatus
		want    map[v1.PodConditionType]cond
	}{
		{name: "every container running: all True", sandbox: true, rs: []lifecycle.ContainerStatus{run("a"), run("b")},
			want: map[v1.PodConditionType]cond{
				v1.PodReadyToStartContainers: {status: v1.ConditionTrue}, v1.PodInitialized: {status: v1.ConditionTrue},
				v1.ContainersReady: {status: v1.ConditionTrue}, v1.PodReady: {status: v1.ConditionTrue}, v1.PodScheduled: {status: v1.ConditionTrue}}},
		{name: "one container not running names it", sandbox: true, rs: []lifecycle.ContainerStatus{run("a")},
			want: map[v1.PodConditionType]cond{
				v1.ContainersReady: {v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [b]"},
				v1.PodReady:        {v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [b]"}}},
		{name: "no container running names them in spec order", sandbox: true,
			want: map[v1.PodConditionType]cond{
				v1.ContainersReady: {v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a b]"},
				v1.PodReady:        {v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a b]"}}},
		{name: "no sandbox: not ready to start containers",
			want: map[v1.PodConditionType]cond{v1.PodReadyToStartContainers: {status: v1.ConditionFalse}}},
		{name: "succeeded pod: PodCompleted", policy: v1.RestartPolicyNever, rs: []lifecycle.ContainerStatus{exited("a", 0), exited("b", 0)},
			want: map[v1.PodConditionType]cond{
				v1.ContainersReady: {v1.ConditionFalse, "PodCompleted", ""}, v1.PodReady: {v1.ConditionFalse, "PodCompleted", ""}}},
		{name: "failed pod: PodFailed", policy: v1.RestartPolicyNever, rs: []lifecycle.ContainerStatus{exited("a", 0), exited("b", 2)},
			want: map[v1.PodConditionType]cond{
				v1.ContainersReady: {v1.ConditionFalse, "PodFailed", ""}, v1.PodReady: {v1.ConditionFalse, "PodFailed", ""}}},
		{name: "init container running: not initialized", init: []string{"setup"}, sandbox: true, rs: []lifecycle.ContainerStatus{run("setup")},
			want: map[v1.PodConditionType]cond{
				v1.PodInitialized:  {v1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [setup]"},
				v1.ContainersReady: {v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a b]"}}},
		{name: "second init container not run yet", init: []string{"one", "two"}, sandbox: true, rs: []lifecycle.ContainerStatus{exited("one", 0)},
			want: map[v1.PodConditionType]cond{
				v1.PodInitialized: {v1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [two]"}}},
		{name: "init containers done: initialized", init: []string{"one", "two"}, sandbox: true,
			rs:   []lifecycle.ContainerStatus{exited("one", 0), exited("two", 0), run("a"), run("b")},
			want: map[v1.PodConditionType]cond{v1.PodInitialized: {status: v1.ConditionTrue}, v1.PodReady: {status: v1.ConditionTrue}}},
		{name: "readiness gate without its condition", gates: []string{"example.com/lb"}, sandbox: true, rs: []lifecycle.ContainerStatus{run("a"), run("b")},
			want: map[v1.PodConditionType]cond{
				v1.ContainersReady: {status: v1.ConditionTrue},
				v1.PodReady:        {v1.ConditionFalse, "ReadinessGatesNotReady", `corresponding condition of pod readiness gate "example.com/lb" does not exist.`}}},
		{name: "readiness gate False", gates: []string{"example.com/lb"}, sandbox: true, rs: []lifecycle.ContainerStatus{run("a"), run("b")},
			api: []v1.PodCondition{{Type: "example.com/lb", Status: v1.ConditionFalse}},
			want: map[v1.PodConditionType]cond{
				v1.PodReady: {v1.ConditionFalse, "ReadinessGatesNotReady", `the status of pod readiness gate "example.com/lb" is not "True", but False`}}},
		{name: "readiness gate True", gates: []string{"example.com/lb"}, sandbox: true, rs: []lifecycle.ContainerStatus{run("a"), run("b")},
			api:  []v1.PodCondition{{Type: "example.com/lb", Status: v1.ConditionTrue}},
			want: map[v1.PodConditionType]cond{v1.PodReady: {status: v1.ConditionTrue}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := apiPod("1", "p")
			pod.Spec.Containers = []v1.Container{{Name: "a"}, {Name: "b"}}
			for _, n := range tt.init {
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: n})
			}
			for _, g := range tt.gates {
				pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, v1.PodReadinessGate{ConditionType: v1.PodConditionType(g)})
			}
			if tt.policy != "" {
				pod.Spec.RestartPolicy = tt.policy
			}
			pod.Status.Conditions = tt.api
			rs := &lifecycle.PodStatus{ID: "1", SandboxReady: tt.sandbox, ContainerStatuses: tt.rs}
			got := lifecycle.GeneratePodStatus(pod, rs, v1.PodStatus{}, false, nil)
			for typ, want := range tt.want {
				var have *v1.PodCondition
				for i := range got.Conditions {
					if got.Conditions[i].Type == typ {
						have = &got.Conditions[i]
					}
				}
				switch {
				case have == nil:
					t.Errorf("no %s condition in %+v", typ, got.Conditions)
				case have.Status != want.status || have.Reason != want.reason || have.Message != want.message:
					t.Errorf("%s = %s reason %q message %q; want %s reason %q message %q",
						typ, have.Status, have.Reason, have.Message, want.status, want.reason, want.message)
				}
			}
		})
	}
}
