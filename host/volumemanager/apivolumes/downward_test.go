package apivolumes

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

func ptr[T any](v T) *T { return &v }

// downwardPod is a pod with a downwardAPI volume of every kind of item,
// as the upstream conformance specs write them.
func downwardPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1",
			Labels: map[string]string{"key1": "value1"}, Annotations: map[string]string{"builder": "bar"}},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "client-container", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("32Mi")},
				Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")},
			}}},
			Volumes: []v1.Volume{{Name: "podinfo", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
				DefaultMode: ptr(int32(0o400)),
				Items: []v1.DownwardAPIVolumeFile{
					{Path: "podname", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}},
					{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}, Mode: ptr(int32(0o644))},
					{Path: "annotations", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.annotations"}},
					{Path: "sub/key1", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['key1']"}},
					{Path: "cpu_limit", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "client-container", Resource: "limits.cpu", Divisor: resource.MustParse("1m")}},
					{Path: "memory_limit", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "client-container", Resource: "limits.memory"}},
					{Path: "cpu_request", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "client-container", Resource: "requests.cpu"}},
				},
			}}}},
		},
	}
}

// TestDownwardAPIVolume publishes a downwardAPI volume on a host without
// an API server: every item's content and mode, the cpu limit the
// container does not set being the node's allocatable; then the pod's
// labels change and RefreshPod rewrites the files, while a RefreshPod
// with the same labels writes nothing.
func TestDownwardAPIVolume(t *testing.T) {
	pod := downwardPod()
	desired := pod
	clock := lifecycletest.NewFakeClock(time.Unix(0, 0))
	root := t.TempDir()
	vols := New(Config{Root: root, Clock: clock,
		Pod:         func(uid types.UID) (*v1.Pod, bool) { return desired, uid == desired.UID },
		Allocatable: func() (v1.ResourceList, error) { return v1.ResourceList{v1.ResourceCPU: resource.MustParse("3")}, nil },
	})
	vol, err := volumemanager.DesiredVolumes(t.Context(), pod, nil)
	if err != nil {
		t.Fatal(err)
	}
	pv := vol[0]
	if pv.Volume.Plugin != volumemanager.PluginDownwardAPI || !Serves(pv.Volume.Plugin) {
		t.Fatalf("plugin %q, want %q served here", pv.Volume.Plugin, volumemanager.PluginDownwardAPI)
	}
	if err := vols.Publish(t.Context(), pv); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "pods", "u1", "volumes", "kubernetes.io~downward-api", "podinfo")
	want := map[string]struct {
		content string
		mode    os.FileMode
	}{
		"podname":      {"web", 0o400},
		"labels":       {`key1="value1"`, 0o644},
		"annotations":  {`builder="bar"`, 0o400},
		"sub/key1":     {"value1", 0o400},
		"cpu_limit":    {"3000", 0o400},
		"memory_limit": {"67108864", 0o400},
		"cpu_request":  {"1", 0o400},
	}
	check := func(step string) {
		t.Helper()
		for name, w := range want {
			p := filepath.Join(dir, name)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("%s: %v", step, err)
				continue
			}
			fi, _ := os.Stat(p)
			if string(b) != w.content || fi.Mode().Perm() != w.mode {
				t.Errorf("%s: %s = %q mode %v, want %q mode %v", step, name, b, fi.Mode().Perm(), w.content, w.mode)
			}
		}
	}
	check("published")
	version := func() string {
		v, _ := os.Readlink(filepath.Join(dir, dataLink))
		return v
	}
	before := version()

	vols.RefreshPod(t.Context(), pod.DeepCopy())
	if got := version(); got != before {
		t.Errorf("RefreshPod with the same labels wrote a new version %s (was %s)", got, before)
	}

	updated := pod.DeepCopy()
	updated.Labels["key3"] = "value3"
	updated.Annotations["builder"] = "foo"
	vols.RefreshPod(t.Context(), updated)
	want["labels"] = struct {
		content string
		mode    os.FileMode
	}{"key1=\"value1\"\nkey3=\"value3\"", 0o644}
	want["annotations"] = struct {
		content string
		mode    os.FileMode
	}{`builder="foo"`, 0o400}
	check("after RefreshPod")

	// The periodic refresh takes the newest desired pod too.
	desired = updated.DeepCopy()
	desired.Labels["key4"] = "value4"
	vols.Refresh(t.Context())
	want["labels"] = struct {
		content string
		mode    os.FileMode
	}{"key1=\"value1\"\nkey3=\"value3\"\nkey4=\"value4\"", 0o644}
	check("after Refresh")
}
