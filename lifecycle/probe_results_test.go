package lifecycle

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestContainerProbes(t *testing.T) {
	probe := &v1.Probe{}
	tests := []struct {
		name                   string
		container              v1.Container
		set                    map[ProbeKind]ProbeResult
		id                     string
		wantStarted, wantReady bool
	}{
		{name: "no probes: started and ready", container: v1.Container{Name: "c"}, id: "a", wantStarted: true, wantReady: true},
		{name: "readiness not passed yet", container: v1.Container{Name: "c", ReadinessProbe: probe}, id: "a", wantStarted: true},
		{name: "readiness passed", container: v1.Container{Name: "c", ReadinessProbe: probe},
			set: map[ProbeKind]ProbeResult{Readiness: ProbeSuccess}, id: "a", wantStarted: true, wantReady: true},
		{name: "readiness passed for an older instance", container: v1.Container{Name: "c", ReadinessProbe: probe},
			set: map[ProbeKind]ProbeResult{Readiness: ProbeSuccess}, id: "b", wantStarted: true},
		{name: "startup not passed: neither started nor ready, even with readiness passed",
			container: v1.Container{Name: "c", ReadinessProbe: probe, StartupProbe: probe},
			set:       map[ProbeKind]ProbeResult{Readiness: ProbeSuccess, Startup: ProbeUnknown}, id: "a"},
		{name: "startup passed, no readiness probe", container: v1.Container{Name: "c", StartupProbe: probe},
			set: map[ProbeKind]ProbeResult{Startup: ProbeSuccess}, id: "a", wantStarted: true, wantReady: true},
		{name: "liveness alone does not gate readiness", container: v1.Container{Name: "c", LivenessProbe: probe},
			set: map[ProbeKind]ProbeResult{Liveness: ProbeFailure}, id: "a", wantStarted: true, wantReady: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{tt.container}}}
			pod.UID = "u"
			r := NewProbeResults()
			for k, res := range tt.set {
				r.Set("u", "c", k, "a", res)
			}
			started, ready := r.ContainerProbes(pod, "c", tt.id)
			if started != tt.wantStarted || ready != tt.wantReady {
				t.Fatalf("started %v ready %v; want %v %v", started, ready, tt.wantStarted, tt.wantReady)
			}
		})
	}
}

func TestApplyProbesConditions(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}, {Name: "b", ReadinessProbe: &v1.Probe{}}}}}
	pod.UID = "u"
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	status := func() v1.PodStatus {
		return v1.PodStatus{Phase: v1.PodRunning,
			ContainerStatuses: []v1.ContainerStatus{{Name: "a", ContainerID: "1", State: running, Ready: true}, {Name: "b", ContainerID: "2", State: running, Ready: true}},
			Conditions: []v1.PodCondition{{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", Message: "stale"},
				{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "ContainersNotReady", Message: "stale"}}}
	}
	r := NewProbeResults()
	s := status()
	applyProbes(pod, &s, r)
	if s.ContainerStatuses[0].Ready != true || s.ContainerStatuses[1].Ready != false || s.Conditions[0].Status != v1.ConditionFalse || s.Conditions[1].Status != v1.ConditionFalse {
		t.Fatalf("one container not ready: %+v", s)
	}
	for _, c := range s.Conditions[:2] {
		if c.Reason != "ContainersNotReady" || c.Message != "containers with unready status: [b]" {
			t.Errorf("%s: reason %q message %q; want ContainersNotReady, containers with unready status: [b]", c.Type, c.Reason, c.Message)
		}
	}
	r.Set("u", "b", Readiness, "2", ProbeSuccess)
	s = status()
	applyProbes(pod, &s, r)
	if s.Conditions[0].Status != v1.ConditionTrue || s.Conditions[1].Status != v1.ConditionTrue {
		t.Fatalf("every container ready: %+v", s.Conditions)
	}
	for _, c := range s.Conditions[:2] {
		if c.Reason != "" || c.Message != "" {
			t.Errorf("%s True with reason %q message %q", c.Type, c.Reason, c.Message)
		}
	}
}
