package e2e

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// withStorageLimit sets the container's ephemeral-storage limit.
func withStorageLimit(c v1.Container, limit string) v1.Container {
	c.Resources.Limits = v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse(limit)}
	return c
}

// withEmptyDir adds an emptyDir volume mounted at /data in every container.
func withEmptyDir(pod *v1.Pod, name string, medium v1.StorageMedium, sizeLimit string) *v1.Pod {
	e := &v1.EmptyDirVolumeSource{Medium: medium}
	if sizeLimit != "" {
		e.SizeLimit = ptr.To(resource.MustParse(sizeLimit))
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDir: e}})
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].VolumeMounts = append(pod.Spec.Containers[i].VolumeMounts, v1.VolumeMount{Name: name, MountPath: "/data"})
	}
	return pod
}

// TestPodLocalStorageEviction: a pod over its ephemeral-storage limit
// (4 MiB written into its root with a 1Mi limit), a pod with a container
// over its own limit, and a pod whose emptyDir is over its sizeLimit are
// evicted as the kubelet evicts them: Failed, reason Evicted, the
// kubelet's message, an Evicted event, containers stopped and not
// restarted whatever the restart policy. A pod under its limits, which
// writes into a Memory emptyDir (memory, not storage), keeps running.
func TestPodLocalStorageEviction(t *testing.T) {
	h := startPodHost(t)
	const write = `dd if=/dev/zero of=%s bs=1M count=4 && sync; trap "exit 0" TERM; while true; do sleep 1; done`
	fill := func(path string) string { return fmt.Sprintf(write, path) }

	// The pod under its limits writes first and is ready once it has
	// written, so every measurement that sees the others' writes sees its.
	under := withEmptyDir(busyPod("under", v1.RestartPolicyAlways,
		withStorageLimit(sh("app", `dd if=/dev/zero of=/small bs=1M count=1 && dd if=/dev/zero of=/data/big bs=1M count=4 && sync && touch /done; trap "exit 0" TERM; while true; do sleep 1; done`), "8Mi")),
		"mem", v1.StorageMediumMemory, "")
	under.Spec.Containers[0].ReadinessProbe = &v1.Probe{PeriodSeconds: 1,
		ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"cat", "/done"}}}}
	h.apply(under)
	h.waitPod("under", 90*time.Second, "ready after writing", func(p *v1.Pod) bool {
		for _, c := range p.Status.ContainerStatuses {
			if c.Ready {
				return true
			}
		}
		return false
	})

	h.apply(busyPod("root", v1.RestartPolicyAlways, withStorageLimit(sh("app", fill("/big")), "1Mi")))
	h.apply(busyPod("container", v1.RestartPolicyAlways,
		withStorageLimit(sh("a", fill("/big")), "1Mi"),
		withStorageLimit(sh("b", `trap "exit 0" TERM; while true; do sleep 1; done`), "64Mi")))
	h.apply(withEmptyDir(busyPod("emptydir", v1.RestartPolicyAlways, sh("app", fill("/data/big"))), "scratch", "", "1Mi"))

	for _, tc := range []struct{ pod, message string }{
		{"root", "Pod ephemeral local storage usage exceeds the total limit of containers 1Mi. "},
		{"container", `Container a exceeded its local ephemeral storage limit "1Mi". `},
		{"emptydir", `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `},
	} {
		p := h.waitPhase(tc.pod, v1.PodFailed, 120*time.Second)
		if p.Status.Reason != "Evicted" || p.Status.Message != tc.message {
			t.Errorf("%s: reason %q message %q; want Evicted %q", tc.pod, p.Status.Reason, p.Status.Message, tc.message)
		}
		poll(t, 30*time.Second, func() bool {
			for _, c := range h.criContainers(string(p.UID)) {
				if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
					return false
				}
			}
			return true
		}, func() string { return tc.pod + ": a container still runs after the eviction" })
		if !hasEvent(h.events(tc.pod), "Evicted", tc.message) {
			t.Errorf("%s: no Evicted event:\n%s", tc.pod, eventsString(h.events(tc.pod)))
		}
	}
	// The evicted pods stay Failed with their containers stopped and not
	// restarted (one container each, never a second attempt).
	for _, name := range []string{"root", "container", "emptydir"} {
		p, ok := h.get(name)
		if !ok || p.Status.Phase != v1.PodFailed || p.Status.Reason != "Evicted" {
			t.Errorf("%s after the eviction: %+v", name, p)
			continue
		}
		for _, c := range h.criContainers(string(p.UID)) {
			if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING || c.Metadata.Attempt != 0 {
				t.Errorf("%s: container %s runs or restarted (%s, attempt %d) after the eviction", name, c.Metadata.Name, c.State, c.Metadata.Attempt)
			}
		}
	}
	if p, ok := h.get("under"); !ok || p.Status.Phase != v1.PodRunning {
		t.Errorf("the pod under its limits: %+v", p)
	}
	// Its Memory emptyDir is a tmpfs mount: deleted, the pod unmounts it.
	h.delete("under", ptr.To[int64](1))
	h.waitGone("under", 60*time.Second)
}
