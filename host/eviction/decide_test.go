package eviction

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const mi = 1 << 20

func limited(name string, limit string) v1.Container {
	c := v1.Container{Name: name}
	if limit != "" {
		c.Resources.Limits = v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse(limit)}
	}
	return c
}

func emptyDir(name string, medium v1.StorageMedium, size string) v1.Volume {
	e := &v1.EmptyDirVolumeSource{Medium: medium}
	if size != "" {
		e.SizeLimit = ptr.To(resource.MustParse(size))
	}
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDir: e}}
}

func TestDecide(t *testing.T) {
	cases := []struct {
		name    string
		spec    v1.PodSpec
		usage   Usage
		signal  string
		message string
	}{
		{
			name:  "no limits, any use",
			spec:  v1.PodSpec{Containers: []v1.Container{limited("c", "")}, Volumes: []v1.Volume{emptyDir("x", "", "")}},
			usage: Usage{Containers: map[string]ContainerUsage{"c": {WritableLayer: 100 * mi, Logs: mi}}, EmptyDirs: map[string]uint64{"x": 100 * mi}},
		},
		{
			name:  "emptyDir at its limit is not over it",
			spec:  v1.PodSpec{Containers: []v1.Container{limited("c", "")}, Volumes: []v1.Volume{emptyDir("x", "", "1Mi")}},
			usage: Usage{EmptyDirs: map[string]uint64{"x": mi}},
		},
		{
			name:    "emptyDir over its sizeLimit",
			spec:    v1.PodSpec{Containers: []v1.Container{limited("c", "")}, Volumes: []v1.Volume{emptyDir("x", "", "1Mi")}},
			usage:   Usage{EmptyDirs: map[string]uint64{"x": mi + 1}},
			signal:  SignalEmptyDirLimit,
			message: `Usage of EmptyDir volume "x" exceeds the limit "1Mi". `,
		},
		{
			name:  "a Memory emptyDir is not storage",
			spec:  v1.PodSpec{Containers: []v1.Container{limited("c", "1Mi")}, Volumes: []v1.Volume{emptyDir("m", v1.StorageMediumMemory, "1Mi")}},
			usage: Usage{Containers: map[string]ContainerUsage{"c": {WritableLayer: 4096}}, EmptyDirs: map[string]uint64{"m": 8 * mi}},
		},
		{
			name:    "pod over the sum of its containers' limits",
			spec:    v1.PodSpec{Containers: []v1.Container{limited("a", "1Mi"), limited("b", "1Mi")}, Volumes: []v1.Volume{emptyDir("x", "", "")}},
			usage:   Usage{Containers: map[string]ContainerUsage{"a": {WritableLayer: mi / 2}, "b": {Logs: mi / 2}}, EmptyDirs: map[string]uint64{"x": mi + 1}},
			signal:  SignalPodLimit,
			message: "Pod ephemeral local storage usage exceeds the total limit of containers 2Mi. ",
		},
		{
			name:    "pod over the limit of its only container",
			spec:    v1.PodSpec{Containers: []v1.Container{limited("c", "1Mi")}},
			usage:   Usage{Containers: map[string]ContainerUsage{"c": {WritableLayer: 4 * mi}}},
			signal:  SignalPodLimit,
			message: "Pod ephemeral local storage usage exceeds the total limit of containers 1Mi. ",
		},
		{
			name:  "pod under its limits",
			spec:  v1.PodSpec{Containers: []v1.Container{limited("a", "1Mi"), limited("b", "3Mi")}},
			usage: Usage{Containers: map[string]ContainerUsage{"a": {WritableLayer: mi / 2}, "b": {WritableLayer: 2 * mi}}},
		},
		{
			// The pod's total (4Mi) is within the sum (5Mi); one container is over its own.
			name:    "container over its own limit",
			spec:    v1.PodSpec{Containers: []v1.Container{limited("a", "1Mi"), limited("b", "4Mi")}},
			usage:   Usage{Containers: map[string]ContainerUsage{"a": {WritableLayer: mi / 2, Logs: mi}, "b": {WritableLayer: 2 * mi}}},
			signal:  SignalContainerLimit,
			message: `Container a exceeded its local ephemeral storage limit "1Mi". `,
		},
		{
			// A dedicated image filesystem: the container's own limit counts its logs only.
			name:  "container layer on a dedicated image filesystem",
			spec:  v1.PodSpec{Containers: []v1.Container{limited("a", "1Mi"), limited("b", "8Mi")}},
			usage: Usage{Containers: map[string]ContainerUsage{"a": {WritableLayer: 2 * mi, Logs: mi / 2}}, DedicatedImageFs: true},
		},
		{
			name:    "container logs on a dedicated image filesystem",
			spec:    v1.PodSpec{Containers: []v1.Container{limited("a", "1Mi"), limited("b", "8Mi")}},
			usage:   Usage{Containers: map[string]ContainerUsage{"a": {WritableLayer: mi / 2, Logs: 2 * mi}}, DedicatedImageFs: true},
			signal:  SignalContainerLimit,
			message: `Container a exceeded its local ephemeral storage limit "1Mi". `,
		},
		{
			name:    "the emptyDir rule comes first",
			spec:    v1.PodSpec{Containers: []v1.Container{limited("c", "1Mi")}, Volumes: []v1.Volume{emptyDir("x", "", "512Ki")}},
			usage:   Usage{Containers: map[string]ContainerUsage{"c": {WritableLayer: 4 * mi}}, EmptyDirs: map[string]uint64{"x": mi}},
			signal:  SignalEmptyDirLimit,
			message: `Usage of EmptyDir volume "x" exceeds the limit "512Ki". `,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: tc.spec}
			e, ok := Decide(pod, tc.usage)
			if ok != (tc.signal != "") || e.Signal != tc.signal || e.Message != tc.message {
				t.Errorf("Decide = %+v, %t; want signal %q message %q", e, ok, tc.signal, tc.message)
			}
		})
	}
}

func TestCritical(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  v1.Pod
		want bool
	}{
		{"local API pod", v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kubernetes.io/config.source": "api"}}}, false},
		{"static pod", v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kubernetes.io/config.source": "file"}}}, true},
		{"system critical", v1.Pod{Spec: v1.PodSpec{Priority: ptr.To[int32](2000000000)}}, true},
		{"high priority", v1.Pod{Spec: v1.PodSpec{Priority: ptr.To[int32](1999999999)}}, false},
	} {
		if got := Critical(&tc.pod); got != tc.want {
			t.Errorf("%s: Critical = %t; want %t", tc.name, got, tc.want)
		}
	}
}

func TestFailedStatus(t *testing.T) {
	st := v1.PodStatus{Phase: v1.PodRunning}
	FailedStatus(&st, Eviction{Message: "m"})
	if st.Phase != v1.PodFailed || st.Reason != "Evicted" || st.Message != "m" || len(st.Conditions) != 0 {
		t.Errorf("status %+v", st)
	}
}
