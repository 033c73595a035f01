package e2e

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// downwardProbe prints, from inside the container, the downward API's env
// variables, the files of the downwardAPI volume at /etc/podinfo (their
// content and modes) and then, every half second, the labels and
// annotations files of both volumes on one line each (the annotations
// include the kubernetes.io/config.* ones the host adds, as the kubelet's
// do).
const downwardProbe = `echo "env POD_NAME=$POD_NAME CPU_LIMIT=$CPU_LIMIT MEMORY_REQUEST=$MEMORY_REQUEST"; echo "ips POD_IP=$POD_IP HOST_IP=$HOST_IP"; ` +
	`if [ -n "$POD_IP" ] && [ "$POD_IP" = "$HOST_IP" ]; then echo "pod IP is the host IP"; fi; ` +
	`echo "podname=$(cat /etc/podinfo/podname) mode=$(stat -L -c %a /etc/podinfo/podname) labels-mode=$(stat -L -c %a /etc/podinfo/labels)"; ` +
	`echo "cpu_limit=$(cat /etc/podinfo/cpu_limit) memory_request=$(cat /etc/podinfo/memory_request) memory_limit=$(cat /etc/podinfo/memory_limit)"; ` +
	`while true; do echo "labels: $(cat /etc/podinfo/labels | tr '\n' ' ')"; echo "annotations: $(cat /etc/podinfo/annotations | tr '\n' ' ')"; ` +
	`echo "projected: $(cat /etc/projected/info/labels | tr '\n' ' ')"; sleep 0.5; done`

// downwardPod is a pod with a downwardAPI volume, a projected volume of a
// downwardAPI source and downward API env, as the upstream [NodeConformance]
// specs write them: its container requests 250m cpu and 32Mi memory and
// limits memory to 64Mi, and sets no cpu limit (the node's allocatable).
func downwardPod(name string) *v1.Pod {
	c := sh("main", downwardProbe)
	c.Resources = v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("32Mi")},
		Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")},
	}
	field := func(p string) *v1.ObjectFieldSelector { return &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: p} }
	c.Env = []v1.EnvVar{
		{Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: field("metadata.name")}},
		{Name: "POD_IP", ValueFrom: &v1.EnvVarSource{FieldRef: field("status.podIP")}},
		{Name: "HOST_IP", ValueFrom: &v1.EnvVarSource{FieldRef: field("status.hostIP")}},
		{Name: "CPU_LIMIT", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.cpu"}}},
		{Name: "MEMORY_REQUEST", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "requests.memory", Divisor: resource.MustParse("1Mi")}}},
	}
	c.VolumeMounts = []v1.VolumeMount{{Name: "podinfo", MountPath: "/etc/podinfo"}, {Name: "projected", MountPath: "/etc/projected"}}
	res := func(r, divisor string) *v1.ResourceFieldSelector {
		s := &v1.ResourceFieldSelector{ContainerName: "main", Resource: r}
		if divisor != "" {
			s.Divisor = resource.MustParse(divisor)
		}
		return s
	}
	mode400, mode644 := int32(0o400), int32(0o644)
	p := busyPod(name, v1.RestartPolicyAlways, c)
	p.Labels = map[string]string{"key1": "value1", "key2": "value2"}
	p.Annotations = map[string]string{"builder": "bar"}
	p.Spec.Volumes = []v1.Volume{
		volume("podinfo", v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{DefaultMode: &mode400, Items: []v1.DownwardAPIVolumeFile{
			{Path: "podname", FieldRef: field("metadata.name")},
			{Path: "labels", FieldRef: field("metadata.labels"), Mode: &mode644},
			{Path: "annotations", FieldRef: field("metadata.annotations")},
			{Path: "cpu_limit", ResourceFieldRef: res("limits.cpu", "")},
			{Path: "memory_request", ResourceFieldRef: res("requests.memory", "1Mi")},
			{Path: "memory_limit", ResourceFieldRef: res("limits.memory", "")},
		}}}),
		volume("projected", v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{{Path: "info/labels", FieldRef: field("metadata.labels")}}}},
		}}}),
	}
	p.Spec.TerminationGracePeriodSeconds = new(int64)
	return p
}

// checkDownwardStart waits for what the container read at its start:
// the env (the pod, as a host-network pod, has the node's IP as its own,
// ip when not empty; the unset cpu limit is the node's cpu count), the
// files, their modes, and the first labels and annotations.
func checkDownwardStart(h *podHost, name, ip string) {
	h.t.Helper()
	cpus := runtime.NumCPU()
	h.waitLog(name, "main", fmt.Sprintf("env POD_NAME=%s CPU_LIMIT=%d MEMORY_REQUEST=32\n", name, cpus))
	h.waitLog(name, "main", "pod IP is the host IP\n")
	if ip != "" {
		h.waitLog(name, "main", fmt.Sprintf("ips POD_IP=%s HOST_IP=%s\n", ip, ip))
	}
	h.waitLog(name, "main", fmt.Sprintf("podname=%s mode=400 labels-mode=644\n", name))
	h.waitLog(name, "main", fmt.Sprintf("cpu_limit=%d memory_request=32 memory_limit=67108864\n", cpus))
	h.waitLog(name, "main", `labels: key1="value1" key2="value2"`+"\n")
	h.waitLog(name, "main", `annotations: builder="bar" kubernetes.io/config.`)
	h.waitLog(name, "main", `projected: key1="value1" key2="value2"`+"\n")
}

// checkDownwardUpdate waits until the new label and annotation reach both
// volumes' files, read inside the running container.
func checkDownwardUpdate(h *podHost, name string) {
	h.t.Helper()
	h.waitLog(name, "main", `labels: key1="value1" key2="value2" key3="value3"`+"\n")
	h.waitLog(name, "main", `annotations: builder="foo" kubernetes.io/config.`)
	h.waitLog(name, "main", `projected: key1="value1" key2="value2" key3="value3"`+"\n")
}

// TestKubeDownwardAPI runs a pod of the API server with downwardAPI and
// projected downwardAPI volumes and downward API env on real containerd,
// then changes its labels and annotations through the API server: the
// files inside the running container change, and the container is not
// restarted.
func TestKubeDownwardAPI(t *testing.T) {
	k := startKubeHost(t)
	k.waitNodeReady(60 * time.Second)
	pod := downwardPod("dapi")
	pod.Spec.NodeName = kubeNode
	no := false
	pod.Spec.AutomountServiceAccountToken = &no
	k.create(pod)
	p := k.waitAPIRunning("dapi", 90*time.Second)
	checkDownwardStart(k.podHost, "dapi", "127.0.0.1")

	patch := `{"metadata":{"labels":{"key3":"value3"},"annotations":{"builder":"foo"}}}`
	if _, err := k.pods.Patch(t.Context(), "dapi", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch labels: %v", err)
	}
	checkDownwardUpdate(k.podHost, "dapi")
	after, _ := k.apiPod("dapi")
	if got, want := containerIDs(after)["main"], containerIDs(p)["main"]; got != want {
		t.Errorf("container main is %s after the update, was %s: want it not restarted", got, want)
	}
	zero := int64(0)
	k.deleteAPIPod("dapi", &zero)
	k.waitAPIGone("dapi", 60*time.Second)
}

// TestDownwardAPIStandalone: without an API server the downward API's
// volumes are served too (their files come from the pod), and a change of
// the pod's labels and annotations through the local API reaches them.
func TestDownwardAPIStandalone(t *testing.T) {
	h := startPodHost(t)
	pod := downwardPod("dapi-local")
	h.apply(pod)
	h.waitPhase("dapi-local", v1.PodRunning, 60*time.Second)
	checkDownwardStart(h, "dapi-local", "")

	pod.Labels["key3"] = "value3"
	pod.Annotations["builder"] = "foo"
	h.apply(pod)
	checkDownwardUpdate(h, "dapi-local")
	zero := int64(0)
	h.delete("dapi-local", &zero)
	h.waitGone("dapi-local", 60*time.Second)
}
