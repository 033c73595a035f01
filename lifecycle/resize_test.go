package lifecycle_test

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

func TestResizeStatus(t *testing.T) {
	list := func(cpu, mem string) v1.ResourceList {
		return v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}
	}
	pod := apiPod("1", "p")
	pod.Generation = 3
	pod.Spec.Resources = &v1.ResourceRequirements{Requests: list("200m", "128Mi"), Limits: list("400m", "256Mi")}
	pod.Spec.Containers = []v1.Container{
		{Name: "sized", Resources: v1.ResourceRequirements{Requests: list("100m", "64Mi"), Limits: list("200m", "128Mi")}},
		{Name: "bare"},
	}
	actuated := pod.Spec.Containers[0].Resources.DeepCopy()
	podActuated := pod.Spec.Resources.DeepCopy()
	rs := &lifecycle.PodStatus{ID: "1", SandboxReady: true, Resources: podActuated, ContainerStatuses: []lifecycle.ContainerStatus{
		{ID: "c1", Name: "sized", State: lifecycle.ContainerRunning, Resources: actuated},
		{ID: "c2", Name: "bare", State: lifecycle.ContainerRunning, Resources: &v1.ResourceRequirements{}},
	}}

	s := lifecycle.GeneratePodStatus(pod, rs, v1.PodStatus{}, false, nil)
	if s.ObservedGeneration != 3 {
		t.Errorf("observedGeneration: got %d; want 3", s.ObservedGeneration)
	}
	sized, bare := s.ContainerStatuses[0], s.ContainerStatuses[1]
	if sized.Resources == nil || !lifecycle.SameResources(*sized.Resources, *actuated) || sized.AllocatedResources.Cpu().String() != "100m" {
		t.Errorf("sized: got resources %+v allocated %v", sized.Resources, sized.AllocatedResources)
	}
	if bare.Resources == nil || bare.Resources.Requests != nil || bare.Resources.Limits != nil || bare.AllocatedResources != nil {
		t.Errorf("bare: got resources %+v allocated %v; want empty resources and no allocation", bare.Resources, bare.AllocatedResources)
	}
	if !lifecycle.SameResources(*s.Resources, *pod.Spec.Resources) || s.AllocatedResources.Memory().String() != "128Mi" {
		t.Errorf("pod: got resources %+v allocated %v", s.Resources, s.AllocatedResources)
	}
	if hasCondition(s, v1.PodResizeInProgress) {
		t.Error("PodResizeInProgress with nothing to resize")
	}

	// The spec grows; the runtime still runs the old values.
	pod.Spec.Containers[0].Resources.Limits = list("300m", "128Mi")
	s = lifecycle.GeneratePodStatus(pod, rs, s, false, nil)
	if !hasCondition(s, v1.PodResizeInProgress) {
		t.Error("no PodResizeInProgress while a container's resources lag behind its spec")
	}
	if s.ContainerStatuses[0].Resources.Limits.Cpu().String() != "200m" {
		t.Errorf("status resources: got %v; want what runs (200m)", s.ContainerStatuses[0].Resources.Limits.Cpu())
	}
	pod.Spec.Containers[0].Resources.Limits = list("200m", "128Mi")
	pod.Spec.Resources.Limits = list("500m", "256Mi")
	if s = lifecycle.GeneratePodStatus(pod, rs, s, false, nil); !hasCondition(s, v1.PodResizeInProgress) {
		t.Error("no PodResizeInProgress while the pod cgroup lags behind the pod-level resources")
	}

	// The actuation failed: the condition says why, as the kubelet's
	// (upstream: "in-progress reason is not error").
	rs.ResizeError = "cannot decrease memory limits: attempting to set pod memory limit (10240) below current usage (1000000)"
	s = lifecycle.GeneratePodStatus(pod, rs, s, false, nil)
	var c *v1.PodCondition
	for i := range s.Conditions {
		if s.Conditions[i].Type == v1.PodResizeInProgress {
			c = &s.Conditions[i]
		}
	}
	if c == nil || c.Reason != v1.PodReasonError || c.Message != rs.ResizeError {
		t.Errorf("PodResizeInProgress after a failed actuation: %+v; want reason Error with the message", c)
	}
}

func hasCondition(s v1.PodStatus, t v1.PodConditionType) bool {
	for _, c := range s.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}

// Without pod-level resources the pod's allocatedResources are its
// containers' requests (upstream PLR pod-level resize with requests and
// limits add: nil, want the containers' 2m).
func TestPodAllocatedFromContainers(t *testing.T) {
	pod := apiPod("1", "p")
	pod.Spec.Containers = []v1.Container{
		{Name: "a", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1m")}}},
		{Name: "b", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1m")}}},
	}
	s := lifecycle.GeneratePodStatus(pod, &lifecycle.PodStatus{ID: "1"}, v1.PodStatus{}, false, nil)
	if got := s.AllocatedResources.Cpu().String(); got != "2m" {
		t.Fatalf("pod allocatedResources cpu %s; want 2m", got)
	}
	pod.Spec.Containers = []v1.Container{{Name: "none"}}
	if s := lifecycle.GeneratePodStatus(pod, &lifecycle.PodStatus{ID: "1"}, v1.PodStatus{}, false, nil); s.AllocatedResources != nil {
		t.Fatalf("a pod without requests: allocatedResources %v; want none", s.AllocatedResources)
	}
}

// A pod waiting for a resize is synced every tick; one whose resize
// failed waits for its periodic sync, as the kubelet retries it, instead
// of failing again every second.
func TestDueForResize(t *testing.T) {
	clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
	core := lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{Clock: clock, Cache: lifecycletest.NewFakeRuntime()})
	status := lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: clock, Sink: lifecycletest.NewRecordingSink(), Pods: core})
	s := &lifecycle.Syncer{Status: status}
	pod := apiPod("1", "p")
	if s.DueForResize(pod) {
		t.Error("due without a status")
	}
	status.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue}}})
	if !s.DueForResize(pod) {
		t.Error("not due while a resize waits")
	}
	status.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
		{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue, Reason: v1.PodReasonError, Message: "below current usage"}}})
	if s.DueForResize(pod) {
		t.Error("due every tick after the resize failed")
	}
}
