package eviction

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// TestManagerMemoryPressure: under memory pressure the manager evicts one
// pod per check, the largest working set first among equals, never the
// static pod, records the node's event, and keeps MemoryPressure for the
// transition period after the signal recovered.
func TestManagerMemoryPressure(t *testing.T) {
	small := apiPod("small", v1.PodSpec{Containers: []v1.Container{{Name: "c"}}})
	big := apiPod("big", v1.PodSpec{Containers: []v1.Container{{Name: "c"}}})
	static := apiPod("static", v1.PodSpec{Containers: []v1.Container{{Name: "c"}}})
	static.Annotations["kubernetes.io/config.source"] = "file"
	stats := &runtimev1.ListStatsResponse{}
	for p, ws := range map[*v1.Pod]uint64{small: 10 * mi, big: 300 * mi, static: gi} {
		sb := "sb-" + string(p.UID)
		stats.Sandboxes = append(stats.Sandboxes, &runtimev1.SandboxStats{SandboxId: sb, Metadata: &runtimev1.SandboxMetadata{Uid: string(p.UID)},
			Memory: &runtimev1.MemoryUsage{WorkingSetBytes: ws}})
		stats.Containers = append(stats.Containers, &runtimev1.ContainerStats{SandboxId: sb, Metadata: &runtimev1.ContainerMetadata{Name: "c"},
			Memory: &runtimev1.MemoryUsage{WorkingSetBytes: ws}})
	}
	available := uint64(50 * mi)
	now := time.Unix(1000, 0)
	var evicted, events []string
	m := New(Config{
		RootDir: t.TempDir(),
		Pods:    func() []*v1.Pod { return []*v1.Pod{small, big, static} },
		Stats:   func(context.Context) (*runtimev1.ListStatsResponse, error) { return stats, nil },
		Evict: func(pod *v1.Pod, e Eviction) {
			evicted = append(evicted, pod.Name+": "+e.Message)
		},
		Signals: func(rt *runtimev1.ListStatsResponse) (Observations, error) {
			if rt != stats {
				t.Errorf("signals got stats %v", rt)
			}
			return Observations{SignalMemoryAvailable: {Available: available, Capacity: 4 * gi}}, nil
		},
		NodeEvent:        func(typ, reason, msg string) { events = append(events, typ+" "+reason+" "+msg) },
		TransitionPeriod: time.Minute,
		Now:              func() time.Time { return now },
	})
	m.Check(t.Context())
	want := []string{"big: The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container c was using 300Mi, request is 0, has larger consumption of memory. "}
	if !slices.Equal(evicted, want) {
		t.Fatalf("first check evicted %q, want %q", evicted, want)
	}
	if mem, disk := m.Pressure(); !mem || disk {
		t.Errorf("pressure memory %v disk %v, want memory only", mem, disk)
	}
	if len(events) != 1 || events[0] != "Warning EvictionThresholdMet Attempting to reclaim memory" {
		t.Errorf("node events %q", events)
	}
	m.Check(t.Context())
	m.Check(t.Context())
	if len(evicted) != 2 || evicted[1][:6] != "small:" {
		t.Fatalf("evicted %q: want small second and the static pod never", evicted)
	}
	available = gi
	now = now.Add(59 * time.Second)
	m.Check(t.Context())
	if mem, _ := m.Pressure(); !mem {
		t.Error("MemoryPressure gone within the transition period")
	}
	now = now.Add(time.Second)
	m.Check(t.Context())
	if mem, _ := m.Pressure(); mem {
		t.Error("MemoryPressure stays after the transition period")
	}
	if len(evicted) != 2 {
		t.Errorf("evicted %q after the signal recovered", evicted)
	}
}

// TestManagerDiskPressure: under nodefs pressure the pod with the largest
// emptyDir is evicted, with DiskPressure set.
func TestManagerDiskPressure(t *testing.T) {
	root := t.TempDir()
	var pods []*v1.Pod
	for name, size := range map[string]int{"a": mi, "b": 3 * mi, "c": 2 * mi} {
		p := apiPod(name, v1.PodSpec{Containers: []v1.Container{{Name: "c"}}, Volumes: []v1.Volume{emptyDir("x", "", "")}})
		writeFile(t, filepath.Join(hostvolumes.PodVolumeDir(root, p.UID, volumemanager.PluginEmptyDir, "x"), "f"), size)
		pods = append(pods, p)
	}
	var evicted []string
	m := New(Config{
		RootDir: root,
		Pods:    func() []*v1.Pod { return pods },
		Stats: func(context.Context) (*runtimev1.ListStatsResponse, error) {
			return &runtimev1.ListStatsResponse{}, nil
		},
		Evict: func(pod *v1.Pod, e Eviction) { evicted = append(evicted, pod.Name+": "+e.Message) },
		Signals: func(*runtimev1.ListStatsResponse) (Observations, error) {
			return Observations{SignalNodeFsAvailable: {Available: gi, Capacity: 100 * gi}}, nil
		},
	})
	m.Check(t.Context())
	want := []string{"b: The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 1Gi. "}
	if !slices.Equal(evicted, want) {
		t.Errorf("evicted %q, want %q", evicted, want)
	}
	if mem, disk := m.Pressure(); mem || !disk {
		t.Errorf("pressure memory %v disk %v, want disk only", mem, disk)
	}
}

// TestManagerWaitsForEvictedPodCleanup: after a node-pressure eviction the
// manager evicts no second pod while the first is not cleaned up, nor on
// a reading taken before its cleanup (its memory still counted), as the
// kubelet waits for the evicted pod's cleanup; a reading after the
// cleanup that still meets the threshold evicts the next pod, and so does
// the end of PodCleanupTimeout.
func TestManagerWaitsForEvictedPodCleanup(t *testing.T) {
	hog := apiPod("hog", v1.PodSpec{Containers: []v1.Container{{Name: "c"}}})
	other := apiPod("other", v1.PodSpec{Containers: []v1.Container{{Name: "c"}}})
	stats := &runtimev1.ListStatsResponse{}
	for p, ws := range map[*v1.Pod]uint64{hog: gi, other: 10 * mi} {
		sb := "sb-" + string(p.UID)
		stats.Sandboxes = append(stats.Sandboxes, &runtimev1.SandboxStats{SandboxId: sb, Metadata: &runtimev1.SandboxMetadata{Uid: string(p.UID)},
			Memory: &runtimev1.MemoryUsage{WorkingSetBytes: ws}})
	}
	now := time.Unix(1000, 0)
	readAt := now
	cleaned := false
	var evicted []string
	m := New(Config{
		RootDir: t.TempDir(),
		Pods:    func() []*v1.Pod { return []*v1.Pod{hog, other} },
		Stats:   func(context.Context) (*runtimev1.ListStatsResponse, error) { return stats, nil },
		Evict:   func(pod *v1.Pod, _ Eviction) { evicted = append(evicted, pod.Name) },
		Signals: func(*runtimev1.ListStatsResponse) (Observations, error) {
			return Observations{SignalMemoryAvailable: {Available: 50 * mi, Capacity: 4 * gi, At: readAt}}, nil
		},
		Now:     func() time.Time { return now },
		Cleaned: func(uid types.UID) bool { return uid == hog.UID && cleaned },
	})
	check := func(step string, want ...string) {
		t.Helper()
		m.Check(t.Context())
		if !slices.Equal(evicted, want) {
			t.Fatalf("%s: evicted %q, want %q", step, evicted, want)
		}
		if mem, _ := m.Pressure(); !mem {
			t.Fatalf("%s: no MemoryPressure while the threshold is met", step)
		}
	}
	check("first check", "hog")
	now = now.Add(10 * time.Second)
	readAt = now
	check("hog not cleaned up", "hog")
	now = now.Add(10 * time.Second)
	cleaned = true
	check("reading from before the cleanup was seen", "hog")
	now = now.Add(5 * time.Second)
	readAt = now
	check("reading after the cleanup", "hog", "other")

	// The wait ends after PodCleanupTimeout even without a cleanup.
	evicted, cleaned = nil, false
	hog2 := apiPod("hog2", v1.PodSpec{Containers: []v1.Container{{Name: "c"}}})
	m.cfg.Pods = func() []*v1.Pod { return []*v1.Pod{hog2, other} }
	m.evicted = map[types.UID]bool{}
	m.reclaiming = nil
	check("second round", "hog2")
	now = now.Add(PodCleanupTimeout - time.Second)
	readAt = now
	check("within the timeout", "hog2")
	now = now.Add(time.Second)
	check("after the timeout", "hog2", "other")
}
