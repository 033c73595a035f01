package eviction

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func writeFile(t *testing.T, path string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("x", size)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func apiPod(name string, spec v1.PodSpec) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"),
		Annotations: map[string]string{"kubernetes.io/config.source": "api"}}, Spec: spec}
}

// TestManagerMeasuresAndEvictsOnce: the manager adds writable layers from
// the runtime's stats to the logs and emptyDirs it finds on disk, evicts
// each pod over a limit once, leaves a pod under its limits and a critical
// pod alone, and does not count a Memory emptyDir.
func TestManagerMeasuresAndEvictsOnce(t *testing.T) {
	root := t.TempDir()
	layer := apiPod("layer", v1.PodSpec{Containers: []v1.Container{limited("c", "1Mi")}})
	logs := apiPod("logs", v1.PodSpec{Containers: []v1.Container{limited("c", "1Mi")}})
	dir := apiPod("dir", v1.PodSpec{Containers: []v1.Container{limited("c", "")}, Volumes: []v1.Volume{emptyDir("x", "", "1Mi")}})
	under := apiPod("under", v1.PodSpec{Containers: []v1.Container{limited("c", "8Mi")}, Volumes: []v1.Volume{emptyDir("m", v1.StorageMediumMemory, "")}})
	static := apiPod("static", v1.PodSpec{Containers: []v1.Container{limited("c", "1Mi")}})
	static.Annotations["kubernetes.io/config.source"] = "file"

	writeFile(t, filepath.Join(runtimemanager.PodLogDir(root, "default", "logs", logs.UID), "c", "0.log"), 2*mi)
	writeFile(t, filepath.Join(hostvolumes.PodVolumeDir(root, dir.UID, volumemanager.PluginEmptyDir, "x"), "f"), 2*mi)
	writeFile(t, filepath.Join(hostvolumes.PodVolumeDir(root, under.UID, volumemanager.PluginEmptyDir, "m"), "f"), 16*mi)

	stats := &runtimev1.ListStatsResponse{}
	for _, p := range []*v1.Pod{layer, logs, dir, under, static} {
		sb := "sb-" + string(p.UID)
		stats.Sandboxes = append(stats.Sandboxes, &runtimev1.SandboxStats{SandboxId: sb, Metadata: &runtimev1.SandboxMetadata{Uid: string(p.UID)}})
		used := uint64(4096)
		if p == layer || p == static {
			used = 4 * mi
		}
		// An older instance of the container is not counted.
		stats.Containers = append(stats.Containers,
			&runtimev1.ContainerStats{SandboxId: sb, CreatedAt: 1, Metadata: &runtimev1.ContainerMetadata{Name: "c"}, WritableLayer: &runtimev1.FilesystemUsage{UsedBytes: 64 * mi}},
			&runtimev1.ContainerStats{SandboxId: sb, CreatedAt: 2, Metadata: &runtimev1.ContainerMetadata{Name: "c", Attempt: 1}, WritableLayer: &runtimev1.FilesystemUsage{UsedBytes: used}})
	}

	got := map[string]string{}
	m := New(Config{
		RootDir: root,
		Pods:    func() []*v1.Pod { return []*v1.Pod{layer, logs, dir, under, static} },
		Stats:   func(context.Context) (*runtimev1.ListStatsResponse, error) { return stats, nil },
		Evict: func(pod *v1.Pod, e Eviction) {
			if _, twice := got[pod.Name]; twice {
				t.Errorf("%s evicted twice", pod.Name)
			}
			got[pod.Name] = e.Message
		},
	})
	m.Check(t.Context())
	m.Check(t.Context())
	want := map[string]string{
		"layer": "Pod ephemeral local storage usage exceeds the total limit of containers 1Mi. ",
		"logs":  "Pod ephemeral local storage usage exceeds the total limit of containers 1Mi. ",
		"dir":   `Usage of EmptyDir volume "x" exceeds the limit "1Mi". `,
	}
	if len(got) != len(want) {
		t.Errorf("evicted %v; want %v", got, want)
	}
	for name, msg := range want {
		if got[name] != msg {
			t.Errorf("%s: message %q; want %q", name, got[name], msg)
		}
	}
}

func TestDiskUsageCountsHardLinksOnce(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "f"), mi)
	if err := os.Link(filepath.Join(dir, "a", "f"), filepath.Join(dir, "g")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(dir, "root")); err != nil {
		t.Fatal(err)
	}
	n, err := diskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n < mi || n > mi+64*1024 {
		t.Errorf("disk usage %d; want about 1Mi (the file once, its directories, the link)", n)
	}
	if n, err := diskUsage(filepath.Join(dir, "missing")); n != 0 || err != nil {
		t.Errorf("missing dir: %d, %v", n, err)
	}
}

// TestManagerWithoutRuntimeStats: a runtime without stats leaves the
// writable layers uncounted, but the logs and emptyDirs are still
// enforced.
func TestManagerWithoutRuntimeStats(t *testing.T) {
	root := t.TempDir()
	dir := apiPod("dir", v1.PodSpec{Containers: []v1.Container{limited("c", "")}, Volumes: []v1.Volume{emptyDir("x", "", "1Mi")}})
	writeFile(t, filepath.Join(hostvolumes.PodVolumeDir(root, dir.UID, volumemanager.PluginEmptyDir, "x"), "f"), 2*mi)
	var got []string
	m := New(Config{
		RootDir: root,
		Pods:    func() []*v1.Pod { return []*v1.Pod{dir} },
		Stats: func(context.Context) (*runtimev1.ListStatsResponse, error) {
			return nil, errors.New("the runtime plugin does not serve stats")
		},
		Evict: func(pod *v1.Pod, e Eviction) { got = append(got, pod.Name+": "+e.Message) },
	})
	m.Check(t.Context())
	if want := `dir: Usage of EmptyDir volume "x" exceeds the limit "1Mi". `; len(got) != 1 || got[0] != want {
		t.Errorf("evicted %q; want %q", got, want)
	}
}

// TestManagerDedicatedImageFs: when the runtime's image filesystem is not
// the root directory's, a container's own limit counts its logs only (its
// writable layer is on the image filesystem), as the kubelet's.
func TestManagerDedicatedImageFs(t *testing.T) {
	root := t.TempDir()
	pod := apiPod("layer", v1.PodSpec{Containers: []v1.Container{limited("a", "1Mi"), limited("b", "8Mi")}})
	for _, tc := range []struct {
		imageFs string
		want    int
	}{{root, 1}, {"/proc", 0}} {
		stats := &runtimev1.ListStatsResponse{
			Sandboxes:        []*runtimev1.SandboxStats{{SandboxId: "sb", Metadata: &runtimev1.SandboxMetadata{Uid: string(pod.UID)}}},
			Containers:       []*runtimev1.ContainerStats{{SandboxId: "sb", Metadata: &runtimev1.ContainerMetadata{Name: "a"}, WritableLayer: &runtimev1.FilesystemUsage{UsedBytes: 2 * mi}}},
			ImageFilesystems: []*runtimev1.FilesystemUsage{{Mountpoint: tc.imageFs}},
		}
		var got []string
		New(Config{
			RootDir: root,
			Pods:    func() []*v1.Pod { return []*v1.Pod{pod} },
			Stats:   func(context.Context) (*runtimev1.ListStatsResponse, error) { return stats, nil },
			Evict:   func(_ *v1.Pod, e Eviction) { got = append(got, e.Message) },
		}).Check(t.Context())
		if len(got) != tc.want {
			t.Errorf("image filesystem %s: evictions %q; want %d", tc.imageFs, got, tc.want)
		}
	}
}
