package runtimemanager

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func cpuMem(cpu, mem string) v1.ResourceList {
	l := v1.ResourceList{}
	if cpu != "" {
		l[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return l
}

// resizeCalls are the update calls the runtime received, with what they
// asked, in order.
func (e *env) resizeCalls() []string {
	var out []string
	for _, c := range e.fake.Calls() {
		switch r := c.Req.(type) {
		case *runtimev1.UpdateContainerResourcesRequest:
			out = append(out, "container quota="+itoa(r.GetResources().GetCpuQuota())+" mem="+itoa(r.GetResources().GetMemoryLimitInBytes()))
		case *runtimev1.UpdateSandboxResourcesRequest:
			out = append(out, "pod quota="+itoa(r.GetResources().GetCpuQuota())+" mem="+itoa(r.GetResources().GetMemoryLimitInBytes()))
		}
	}
	return out
}

func itoa(n int64) string { return resource.NewQuantity(n, resource.DecimalSI).String() }

func TestResizeInPlace(t *testing.T) {
	e := newEnv(t)
	pod := newPod("resize", "app")
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: cpuMem("100m", "64Mi"), Limits: cpuMem("200m", "128Mi")}
	pod.Spec.Containers[0].ResizePolicy = []v1.ContainerResizePolicy{
		{ResourceName: v1.ResourceCPU, RestartPolicy: v1.NotRequired},
		{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer},
	}
	e.mustSync(pod)
	first := e.container(pod, "app")
	if got := first.Resources; got == nil || !lifecycle.SameResources(*got, pod.Spec.Containers[0].Resources) {
		t.Fatalf("actuated after creation: got %+v; want the spec's", got)
	}

	// cpu: NotRequired, updated in place.
	pod.Spec.Containers[0].Resources.Limits = cpuMem("400m", "128Mi")
	e.mustSync(pod)
	c := e.container(pod, "app")
	if c.ID != first.ID || c.RestartCount != 0 {
		t.Fatalf("cpu resize: got container %s restarts %d; want %s in place", c.ID, c.RestartCount, first.ID)
	}
	if got, want := e.resizeCalls(), []string{"pod quota=40k mem=134217728", "container quota=40k mem=134217728"}; !slices.Equal(got, want) {
		t.Fatalf("cpu resize calls: got %v; want %v", got, want)
	}
	if !lifecycle.SameResources(*c.Resources, pod.Spec.Containers[0].Resources) {
		t.Fatalf("actuated after cpu resize: got %+v", c.Resources)
	}
	e.mustSync(pod)
	if got := len(e.resizeCalls()); got != 2 {
		t.Fatalf("a sync without change sent %d updates; want none more: %v", got-1, e.resizeCalls())
	}

	// memory: RestartContainer, a new container with the new limit.
	pod.Spec.Containers[0].Resources.Requests = cpuMem("100m", "96Mi")
	e.mustSync(pod)
	c = e.container(pod, "app")
	if c.ID == first.ID || c.RestartCount != 1 {
		t.Fatalf("memory resize: got container %s restarts %d; want a restart", c.ID, c.RestartCount)
	}
	if got := len(e.resizeCalls()); got != 2 {
		t.Fatalf("a restart to resize sent an update too: %v", e.resizeCalls())
	}
	if !lifecycle.SameResources(*c.Resources, pod.Spec.Containers[0].Resources) {
		t.Fatalf("actuated after the restart: got %+v", c.Resources)
	}
}

func TestResizePodLevel(t *testing.T) {
	e := newEnv(t)
	pod := newPod("plr", "own", "inherits")
	pod.Spec.Resources = &v1.ResourceRequirements{Requests: cpuMem("200m", "128Mi"), Limits: cpuMem("300m", "256Mi")}
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: cpuMem("100m", "64Mi"), Limits: cpuMem("100m", "64Mi")}
	e.mustSync(pod)
	var run *runtimev1.RunSandboxRequest
	for _, c := range e.fake.Calls() {
		if r, ok := c.Req.(*runtimev1.RunSandboxRequest); ok {
			run = r
		}
	}
	pc := run.GetConfig().GetPodCgroup()
	if pc.GetQosClass() != "Burstable" || pc.GetResources().GetCpuQuota() != 30000 || pc.GetResources().GetCpuShares() != 204 || pc.GetResources().GetMemoryLimitInBytes() != 256<<20 {
		t.Fatalf("pod cgroup: got %v; want Burstable, quota 30000, shares 204, memory 256Mi", pc)
	}
	var inherits *runtimev1.ContainerConfig
	for _, c := range e.fake.Calls() {
		if r, ok := c.Req.(*runtimev1.CreateContainerRequest); ok && r.GetConfig().GetMetadata().GetName() == "inherits" {
			inherits = r.GetConfig()
		}
	}
	if r := inherits.GetResources(); r.GetCpuQuota() != 30000 || r.GetMemoryLimitInBytes() != 256<<20 {
		t.Fatalf("a container without limits: got %v; want the pod's limits", r)
	}

	// Growing the pod: the pod cgroup first, then the container that
	// takes its limits, and never the one with its own.
	pod.Spec.Resources.Limits = cpuMem("500m", "512Mi")
	e.mustSync(pod)
	want := []string{"pod quota=50k mem=536870912", "container quota=50k mem=536870912"}
	if got := e.resizeCalls(); !slices.Equal(got, want) {
		t.Fatalf("growing calls: got %v; want %v", got, want)
	}
	st := e.status(pod)
	if st.Resources == nil || !lifecycle.SameResources(*st.Resources, *pod.Spec.Resources) {
		t.Fatalf("pod actuated: got %+v; want %+v", st.Resources, pod.Spec.Resources)
	}

	// Shrinking it: the containers before the pod's final values.
	pod.Spec.Resources.Limits = cpuMem("250m", "192Mi")
	e.mustSync(pod)
	want = append(want, "container quota=25k mem=201326592", "pod quota=25k mem=201326592")
	if got := e.resizeCalls(); !slices.Equal(got, want) {
		t.Fatalf("shrinking calls: got %v; want %v", got, want)
	}
}

func TestSpecHashLeavesOutResources(t *testing.T) {
	c := v1.Container{Name: "a", Image: "busybox", Resources: v1.ResourceRequirements{Limits: cpuMem("1", "")}}
	d := c
	d.Resources = v1.ResourceRequirements{Limits: cpuMem("2", "")}
	if specHash(&c) != specHash(&d) {
		t.Fatal("specHash changed with the resources")
	}
	if !sameSpec(hashOf(&c), &c) {
		t.Fatal("an older host's hash of the whole spec is not the same spec")
	}
	d.Image = "busybox:2"
	if sameSpec(specHash(&c), &d) {
		t.Fatal("an image change is the same spec")
	}
}

func TestWidest(t *testing.T) {
	a := v1.ResourceRequirements{Requests: cpuMem("100m", "64Mi"), Limits: cpuMem("200m", "128Mi")}
	b := v1.ResourceRequirements{Requests: cpuMem("300m", "32Mi"), Limits: cpuMem("", "256Mi")}
	w := widest(a, b)
	want := v1.ResourceRequirements{Requests: cpuMem("300m", "64Mi"), Limits: cpuMem("", "256Mi")}
	if !lifecycle.SameResources(w, want) || len(w.Limits) != 1 {
		t.Fatalf("widest: got %+v; want %+v with no cpu limit", w, want)
	}
}

// A container-level restartPolicy and restart rules decide an app
// container's restart in place of the pod's policy.
func TestContainerRestartPolicy(t *testing.T) {
	e := newEnv(t)
	always, never := v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyNever
	pod := newPod("rules", "always", "rule", "never")
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.Containers[0].RestartPolicy = &always
	pod.Spec.Containers[1].RestartPolicy = &never
	pod.Spec.Containers[1].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	e.mustSync(pod)
	e.exit(pod, "always", 1)
	e.exit(pod, "rule", 42)
	e.exit(pod, "never", 1)
	e.clock.Step(time.Minute)
	e.mustSync(pod)
	for name, want := range map[string]int32{"always": 1, "rule": 1, "never": 0} {
		if got := e.container(pod, name).RestartCount; got != want {
			t.Errorf("%s: restart count %d; want %d", name, got, want)
		}
	}
}

// A running ordinary init container is resized in place too.
func TestResizeRunningInitContainer(t *testing.T) {
	e := newEnv(t)
	pod := withInits(newPod("init-resize", "app"), "init")
	pod.Spec.InitContainers[0].Resources = v1.ResourceRequirements{Limits: cpuMem("100m", "64Mi")}
	e.mustSync(pod)
	id := e.container(pod, "init").ID
	pod.Spec.InitContainers[0].Resources = v1.ResourceRequirements{Limits: cpuMem("200m", "64Mi")}
	e.mustSync(pod)
	if c := e.container(pod, "init"); c.ID != id || c.Resources.Limits.Cpu().String() != "200m" {
		t.Fatalf("init container after a resize: got %s with %v; want %s with 200m", c.ID, c.Resources, id)
	}
	if got, want := e.resizeCalls(), []string{"container quota=20k mem=67108864"}; !slices.Equal(got, want) {
		t.Fatalf("calls: got %v; want %v", got, want)
	}
}

// A lowered memory limit at or below what the pod or container uses now
// is refused with the kubelet's message, which the upstream spec matches
// (`memory limit \(\d+\) below current usage`); a limit above the usage,
// a raised one, or a container the runtime reports no usage of passes.
func TestMemoryBelowUsage(t *testing.T) {
	mem := func(q string) actuatedResources {
		return actuatedResources{Own: v1.ResourceRequirements{Limits: cpuMem("", q)}}
	}
	stats := &runtimev1.ListStatsResponse{
		Sandboxes: []*runtimev1.SandboxStats{{SandboxId: "sb"}},
		Containers: []*runtimev1.ContainerStats{
			{ContainerId: "c1", SandboxId: "sb", Memory: &runtimev1.MemoryUsage{UsageBytes: 50 << 20}},
			{ContainerId: "c2", SandboxId: "sb", Memory: &runtimev1.MemoryUsage{UsageBytes: 10 << 20}},
		},
	}
	for _, c := range []struct {
		name string
		a    actions
		want string
	}{
		{"container below usage", actions{resize: []resizeAction{{id: "c1", name: "app", actual: mem("128Mi"), desired: mem("32Mi")}}},
			`attempting to set container "app" memory limit (33554432) below current usage (52428800)`},
		{"container above usage", actions{resize: []resizeAction{{id: "c1", name: "app", actual: mem("128Mi"), desired: mem("64Mi")}}}, ""},
		{"container raised", actions{resize: []resizeAction{{id: "c1", name: "app", actual: mem("1Mi"), desired: mem("2Mi")}}}, ""},
		{"no usage known", actions{resize: []resizeAction{{id: "c9", name: "new", actual: mem("128Mi"), desired: mem("1Ki")}}}, ""},
		// The sandbox reports no memory: the pod's usage is its
		// containers' sum, 60 MiB.
		{"pod below its containers' sum", actions{podResize: &podResize{sandboxID: "sb", actual: v1.ResourceRequirements{Limits: cpuMem("", "1Gi")},
			desired: v1.ResourceRequirements{Limits: cpuMem("", "10Ki")}}},
			"cannot decrease memory limits: attempting to set pod memory limit (10240) below current usage (62914560)"},
		{"pod above", actions{podResize: &podResize{sandboxID: "sb", actual: v1.ResourceRequirements{Limits: cpuMem("", "1Gi")},
			desired: v1.ResourceRequirements{Limits: cpuMem("", "100Mi")}}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := memoryBelowUsage(&c.a, stats)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("got %v; want %q", err, c.want)
			}
		})
	}
}

// Every pod's cgroup has the kubelet's values: sums of its containers, a
// limit only where every container declares it (Burstable), none for
// BestEffort; pod-level resources added later resize it in place.
func TestPodCgroupForEveryPod(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*v1.Pod)
		want string
	}{
		{"best effort", func(*v1.Pod) {}, "shares=2 quota=0 mem=0"},
		{"burstable, one limit missing", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: cpuMem("100m", ""), Limits: cpuMem("200m", "64Mi")}
			p.Spec.Containers[1].Resources = v1.ResourceRequirements{Requests: cpuMem("100m", "")}
		}, "shares=204 quota=0 mem=0"},
		{"burstable, all limits", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: cpuMem("100m", ""), Limits: cpuMem("200m", "64Mi")}
			p.Spec.Containers[1].Resources = v1.ResourceRequirements{Requests: cpuMem("100m", ""), Limits: cpuMem("100m", "32Mi")}
		}, "shares=204 quota=30k mem=100663296"},
		{"guaranteed with overhead", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: cpuMem("100m", "64Mi"), Limits: cpuMem("100m", "64Mi")}
			p.Spec.Containers[1].Resources = v1.ResourceRequirements{Requests: cpuMem("100m", "64Mi"), Limits: cpuMem("100m", "64Mi")}
			p.Spec.Overhead = cpuMem("50m", "16Mi")
		}, "shares=256 quota=25k mem=150994944"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := newPod("cg", "a", "b")
			c.set(pod)
			r := podCgroup(pod).GetResources()
			got := "shares=" + itoa(r.GetCpuShares()) + " quota=" + itoa(r.GetCpuQuota()) + " mem=" + itoa(r.GetMemoryLimitInBytes())
			if got != c.want {
				t.Fatalf("pod cgroup %s; want %s", got, c.want)
			}
		})
	}

	e := newEnv(t)
	pod := newPod("later", "c1")
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: cpuMem("2m", ""), Limits: cpuMem("10m", "")}
	e.mustSync(pod)
	pod.Spec.Resources = &v1.ResourceRequirements{Requests: cpuMem("5m", ""), Limits: cpuMem("25m", "")}
	e.mustSync(pod)
	if got, want := e.resizeCalls(), []string{"pod quota=2500 mem=0"}; !slices.Equal(got, want) {
		t.Fatalf("pod-level resources added: calls %v; want %v", got, want)
	}
	if st := e.status(pod); st.Resources == nil || !lifecycle.SameResources(*st.Resources, *pod.Spec.Resources) {
		t.Fatalf("pod actuated: got %+v; want %+v", st.Resources, pod.Spec.Resources)
	}
}

// A runtime may run a pod whose pod cgroup is not required without one
// (runtime-containerd under the systemd cgroup driver): its containers
// still resize, and only pod-level resources, which need the pod cgroup,
// fail to.
func TestPodCgroupLeftOutByTheRuntime(t *testing.T) {
	e := newEnv(t)
	e.fake.RequiredPodCgroupsOnly = true
	pod := newPod("nocg", "app")
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: cpuMem("100m", ""), Limits: cpuMem("200m", "")}
	e.mustSync(pod)
	for _, c := range e.fake.Calls() {
		if r, ok := c.Req.(*runtimev1.RunSandboxRequest); ok && (r.GetConfig().GetPodCgroup() == nil || r.GetConfig().GetPodCgroup().GetRequired()) {
			t.Fatalf("pod cgroup asked: %v; want one, not required", r.GetConfig().GetPodCgroup())
		}
	}
	pod.Spec.Containers[0].Resources.Limits = cpuMem("400m", "")
	e.mustSync(pod)
	if got, want := e.resizeCalls(), []string{"pod quota=40k mem=0", "container quota=40k mem=0"}; !slices.Equal(got, want) {
		t.Fatalf("container resize calls: got %v; want %v", got, want)
	}
	if c := e.container(pod, "app"); !lifecycle.SameResources(*c.Resources, pod.Spec.Containers[0].Resources) {
		t.Fatalf("actuated after the resize: got %+v", c.Resources)
	}

	pod.Spec.Resources = &v1.ResourceRequirements{Requests: cpuMem("100m", ""), Limits: cpuMem("500m", "")}
	if err := e.sync(pod); err == nil || !strings.Contains(err.Error(), "no pod cgroup") {
		t.Fatalf("pod-level resources added to a pod without a pod cgroup: %v; want the runtime's FAILED_PRECONDITION", err)
	}
}
