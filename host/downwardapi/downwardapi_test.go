package downwardapi

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "ns", UID: "uid-1",
			Labels:      map[string]string{"b": "2", "a": "1"},
			Annotations: map[string]string{"note": "say \"hi\"\nbye"},
		},
		Spec: v1.PodSpec{
			NodeName: "node-a", ServiceAccountName: "sa",
			InitContainers: []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}}},
			Containers: []v1.Container{
				{Name: "app", Resources: v1.ResourceRequirements{
					Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("32Mi")},
					Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1250m"), v1.ResourceMemory: resource.MustParse("64Mi")},
				}},
				{Name: "bare"},
			},
		},
	}
}

var allocatable = v1.ResourceList{
	v1.ResourceCPU:              resource.MustParse("4"),
	v1.ResourceMemory:           resource.MustParse("8Gi"),
	v1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
}

func TestVolumeField(t *testing.T) {
	pod := testPod()
	for path, want := range map[string]string{
		"metadata.name":                  "web",
		"metadata.namespace":             "ns",
		"metadata.uid":                   "uid-1",
		"metadata.labels":                "a=\"1\"\nb=\"2\"",
		"metadata.annotations":           `note="say \"hi\"\nbye"`,
		"metadata.labels['b']":           "2",
		"metadata.labels['missing']":     "",
		"metadata.annotations['note']":   "say \"hi\"\nbye",
		"metadata.annotations['absent']": "",
	} {
		got, err := VolumeField(pod, path)
		if err != nil || got != want {
			t.Errorf("VolumeField(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	for _, path := range []string{"spec.nodeName", "status.podIP", "metadata.labels[b]", "metadata.generateName", ""} {
		if got, err := VolumeField(pod, path); err == nil {
			t.Errorf("VolumeField(%s) = %q, want an error", path, got)
		}
	}
}

func TestEnvField(t *testing.T) {
	pod := testPod()
	a := Addresses{PodIPs: []string{"10.0.0.5", "fd00::5"}, HostIPs: []string{"192.168.1.2", "fd01::2"}}
	for path, want := range map[string]string{
		"metadata.name":           "web",
		"metadata.namespace":      "ns",
		"metadata.uid":            "uid-1",
		"spec.nodeName":           "node-a",
		"spec.serviceAccountName": "sa",
		"status.podIP":            "10.0.0.5",
		"status.podIPs":           "10.0.0.5,fd00::5",
		"status.hostIP":           "192.168.1.2",
		"status.hostIPs":          "192.168.1.2,fd01::2",
		"metadata.labels['a']":    "1",
	} {
		got, err := EnvField(pod, path, a)
		if err != nil || got != want {
			t.Errorf("EnvField(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	if got, err := EnvField(pod, "metadata.labels", a); err == nil {
		t.Errorf("EnvField(metadata.labels) = %q, want an error (only one label in env)", got)
	}
}

func TestEnvFieldHostNetworkTakesTheHostsIPs(t *testing.T) {
	pod := testPod()
	pod.Spec.HostNetwork = true
	a := Addresses{HostIPs: []string{"192.168.1.2"}}
	if got, _ := EnvField(pod, "status.podIP", a); got != "192.168.1.2" {
		t.Errorf("status.podIP of a host-network pod = %q, want the host's 192.168.1.2", got)
	}
	pod.Spec.HostNetwork = false
	if got, _ := EnvField(pod, "status.podIP", a); got != "" {
		t.Errorf("status.podIP of a pod without IP = %q, want empty", got)
	}
}

func TestContainerResourceRoundsUp(t *testing.T) {
	c := &testPod().Spec.Containers[0]
	for _, tt := range []struct {
		resource, divisor, want string
	}{
		{"limits.cpu", "", "2"}, // 1250m in cores, rounded up
		{"limits.cpu", "1m", "1250"},
		{"requests.cpu", "", "1"}, // 250m → 1
		{"requests.cpu", "1m", "250"},
		{"limits.memory", "", "67108864"},
		{"limits.memory", "1Mi", "64"},
		{"limits.memory", "1M", "68"}, // 67.108864 → 68
		{"requests.memory", "1Gi", "1"},
		{"requests.memory", "", "33554432"},
		{"limits.ephemeral-storage", "", "0"}, // unset
	} {
		sel := &v1.ResourceFieldSelector{Resource: tt.resource}
		if tt.divisor != "" {
			sel.Divisor = resource.MustParse(tt.divisor)
		}
		got, err := ContainerResource(c, sel)
		if err != nil || got != tt.want {
			t.Errorf("%s / %q = %q, %v; want %s", tt.resource, tt.divisor, got, err, tt.want)
		}
	}
	if got, err := ContainerResource(c, &v1.ResourceFieldSelector{Resource: "limits.hugepages-2Mi"}); err == nil {
		t.Errorf("limits.hugepages-2Mi = %q, want an error", got)
	}
}

func TestUnsetLimitsDefaultToAllocatable(t *testing.T) {
	pod := testPod()
	for _, tt := range []struct {
		container, resource, want string
	}{
		{"bare", "limits.cpu", "4"},
		{"bare", "limits.memory", "8589934592"},
		{"bare", "limits.ephemeral-storage", "107374182400"},
		{"bare", "requests.cpu", "0"}, // requests are not defaulted
		{"app", "limits.cpu", "2"},    // a set limit stays
		{"app", "limits.memory", "67108864"},
		{"init", "limits.cpu", "4"},
	} {
		sel := &v1.ResourceFieldSelector{ContainerName: tt.container, Resource: tt.resource}
		got, err := VolumeResource(pod, sel, allocatable)
		if err != nil || got != tt.want {
			t.Errorf("volume %s %s = %q, %v; want %s", tt.container, tt.resource, got, err, tt.want)
		}
	}
	if _, err := VolumeResource(pod, &v1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}, allocatable); err == nil {
		t.Error("a missing container: want an error")
	}
	if got := pod.Spec.Containers[1].Resources.Limits; got != nil {
		t.Errorf("the pod's container was changed: limits %v", got)
	}
}

func TestEnvResource(t *testing.T) {
	pod := testPod()
	bare := &pod.Spec.Containers[1]
	for _, tt := range []struct {
		sel  v1.ResourceFieldSelector
		want string
	}{
		{v1.ResourceFieldSelector{Resource: "limits.memory"}, "8589934592"},
		{v1.ResourceFieldSelector{Resource: "limits.cpu", Divisor: resource.MustParse("1m")}, "4000"},
		{v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu"}, "2"},
		{v1.ResourceFieldSelector{ContainerName: "bare", Resource: "limits.cpu"}, "4"},
		// an init container named in env is taken as written
		{v1.ResourceFieldSelector{ContainerName: "init", Resource: "limits.cpu"}, "0"},
		{v1.ResourceFieldSelector{ContainerName: "init", Resource: "requests.cpu", Divisor: resource.MustParse("1m")}, "100"},
	} {
		got, err := EnvResource(pod, bare, &tt.sel, allocatable)
		if err != nil || got != tt.want {
			t.Errorf("env %+v = %q, %v; want %s", tt.sel, got, err, tt.want)
		}
	}
}

func TestFormatMap(t *testing.T) {
	if got := FormatMap(nil); got != "" {
		t.Errorf("FormatMap(nil) = %q", got)
	}
	if got, want := FormatMap(map[string]string{"key2": "value2", "key1": "value1"}), "key1=\"value1\"\nkey2=\"value2\""; got != want {
		t.Errorf("FormatMap = %q, want %q", got, want)
	}
}
