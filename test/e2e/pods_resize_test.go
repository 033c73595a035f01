package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestPodResizeInPlace: a pod with pod-level resources runs in its own
// cgroup (the kubelet's cgroupfs layout) limited by them; a changed cpu
// limit is actuated in the running container (same container, new CFS
// quota), a changed memory limit whose resizePolicy says RestartContainer
// restarts its container with the new limit, and the pod cgroup follows
// its pod-level resources, all read from the node's cgroup files.
func TestPodResizeInPlace(t *testing.T) {
	h := startPodHost(t)
	list := func(cpu, mem string) v1.ResourceList {
		return v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}
	}
	loop := `trap "exit 0" TERM; while true; do sleep 1; done`
	pod := busyPod("resize", v1.RestartPolicyAlways, sh("inplace", loop), sh("restarts", loop))
	pod.Spec.Resources = &v1.ResourceRequirements{Requests: list("200m", "64Mi"), Limits: list("800m", "256Mi")}
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: list("100m", "32Mi"), Limits: list("200m", "64Mi")}
	pod.Spec.Containers[1].Resources = v1.ResourceRequirements{Requests: list("100m", "32Mi"), Limits: list("200m", "64Mi")}
	pod.Spec.Containers[1].ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer}}
	h.apply(pod)
	p := h.waitPhase("resize", v1.PodRunning, 90*time.Second)
	podCgroup := "kubepods/burstable/pod" + string(p.UID)
	cgroupFile := func(hierarchy, rel, name string) string {
		b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", hierarchy, podCgroup, rel, name))
		if err != nil {
			return err.Error()
		}
		return strings.TrimSpace(string(b))
	}
	if got := cgroupFile("memory", "", "memory.limit_in_bytes"); got != "268435456" {
		t.Fatalf("pod cgroup memory limit: %s; want 256Mi", got)
	}
	inplace := containerStatus(p, "inplace").ContainerID
	id := strings.TrimPrefix(inplace, "containerd://")
	if got := cgroupFile("cpu", id, "cpu.cfs_quota_us"); got != "20000" {
		t.Fatalf("container quota: %s; want 20000 (200m)", got)
	}

	pod.Spec.Resources.Limits = list("1", "512Mi")
	pod.Spec.Containers[0].Resources.Limits = list("400m", "64Mi")
	pod.Spec.Containers[1].Resources.Limits = list("200m", "128Mi")
	h.apply(pod)
	poll(t, 60*time.Second, func() bool {
		p, _ = h.get("resize")
		r := containerStatus(p, "restarts")
		return p != nil && r != nil && r.RestartCount == 1 && r.State.Running != nil && !resizeInProgress(p) &&
			cgroupFile("cpu", id, "cpu.cfs_quota_us") == "40000" && cgroupFile("memory", "", "memory.limit_in_bytes") == "536870912"
	}, func() string {
		return "resize not actuated: pod cgroup memory " + cgroupFile("memory", "", "memory.limit_in_bytes") +
			", container quota " + cgroupFile("cpu", id, "cpu.cfs_quota_us") + ", status " + podStatusString(p)
	})
	if got := containerStatus(p, "inplace"); got.ContainerID != inplace || got.RestartCount != 0 {
		t.Errorf("cpu resize: container %s restarts %d; want %s in place", got.ContainerID, got.RestartCount, inplace)
	}
	restarted := strings.TrimPrefix(containerStatus(p, "restarts").ContainerID, "containerd://")
	if got := cgroupFile("memory", restarted, "memory.limit_in_bytes"); got != "134217728" {
		t.Errorf("restarted container memory limit: %s; want 128Mi", got)
	}
	if r := containerStatus(p, "inplace").Resources; r == nil || r.Limits.Cpu().String() != "400m" {
		t.Errorf("status resources: %+v; want the 400m limit", r)
	}
}

func resizeInProgress(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodResizeInProgress {
			return true
		}
	}
	return false
}

// TestPodCgroupForEveryPod: a pod without pod-level resources runs in its
// own cgroup too, sized as the kubelet sizes it from its containers (a
// Guaranteed pod directly below /kubepods with the sums of their requests
// and limits, a BestEffort one below /kubepods/besteffort with the least
// shares), its containers below it; the QoS cgroup of BestEffort pods has
// the least shares; deleting the pods removes their cgroups.
func TestPodCgroupForEveryPod(t *testing.T) {
	h := startPodHost(t)
	loop := `trap "exit 0" TERM; while true; do sleep 1; done`
	list := v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi")}
	guaranteed := busyPod("guaranteed", v1.RestartPolicyAlways, sh("a", loop), sh("b", loop))
	for i := range guaranteed.Spec.Containers {
		guaranteed.Spec.Containers[i].Resources = v1.ResourceRequirements{Requests: list, Limits: list}
	}
	h.apply(guaranteed)
	h.apply(busyPod("besteffort", v1.RestartPolicyAlways, sh("c", loop)))
	read := func(file string) string {
		b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", file))
		if err != nil {
			return err.Error()
		}
		return strings.TrimSpace(string(b))
	}
	g := h.waitPhase("guaranteed", v1.PodRunning, 90*time.Second)
	gCgroup := "kubepods/pod" + string(g.UID)
	for file, want := range map[string]string{
		"cpu/" + gCgroup + "/cpu.shares": "204", "cpu/" + gCgroup + "/cpu.cfs_quota_us": "20000",
		"memory/" + gCgroup + "/memory.limit_in_bytes": "134217728",
	} {
		if got := read(file); got != want {
			t.Errorf("%s: %s; want %s", file, got, want)
		}
	}
	a := strings.TrimPrefix(containerStatus(g, "a").ContainerID, "containerd://")
	if got := read("memory/" + gCgroup + "/" + a + "/memory.limit_in_bytes"); got != "67108864" {
		t.Errorf("container a below the pod cgroup: memory limit %s; want 64Mi", got)
	}
	be := h.waitPhase("besteffort", v1.PodRunning, 90*time.Second)
	beCgroup := "kubepods/besteffort/pod" + string(be.UID)
	for file, want := range map[string]string{
		"cpu/" + beCgroup + "/cpu.shares": "2", "cpu/kubepods/besteffort/cpu.shares": "2",
		"memory/" + beCgroup + "/memory.limit_in_bytes": read("memory/memory.limit_in_bytes"),
	} {
		if got := read(file); got != want {
			t.Errorf("%s: %s; want %s", file, got, want)
		}
	}

	for _, name := range []string{"guaranteed", "besteffort"} {
		h.delete(name, nil)
		h.waitGone(name, 60*time.Second)
	}
	for _, dir := range []string{"cpu/" + gCgroup, "memory/" + gCgroup, "cpu/" + beCgroup, "memory/" + beCgroup} {
		poll(t, 30*time.Second, func() bool {
			_, err := os.Stat(filepath.Join("/sys/fs/cgroup", dir))
			return os.IsNotExist(err)
		}, func() string { return dir + " is still there after its pod was deleted" })
	}
}
