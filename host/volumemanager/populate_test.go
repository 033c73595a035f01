package volumemanager

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// TestAddPodKeepsRestoredMountsOfRunningPods restores a published
// emptyDir of a pod that still runs: with the pod added before the
// desired state is marked populated, nothing is unpublished or published
// again; a restored pod that was not added is unpublished.
func TestAddPodKeepsRestoredMountsOfRunningPods(t *testing.T) {
	store := &MemoryStore{}
	running, gone := testPod("p1", "empty:data"), testPod("p2", "empty:data")
	var recs []Record
	for _, p := range []string{"p1", "p2"} {
		vol := Volume{ID: VolumeID(PluginEmptyDir + "/" + p + "-data"), Plugin: PluginEmptyDir}
		recs = append(recs, Record{Volume: vol, Pods: []PodRecord{{Pod: testPod(p, "").UID, Name: "data", State: Mounted}}})
	}
	if err := store.Save(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	plugins := newFakePlugins(store)
	clock := lifecycletest.NewFakeClock(time.Unix(0, 0))
	m := NewManager(Config{Plugins: plugins, Classifier: testClassifier, Store: store, Clock: clock, Resolver: testResolver{}})
	if err := m.Reconstruct(testCtx(t), fixedDirs{{Pod: "p1", Plugin: PluginEmptyDir, Name: "data"}, {Pod: "p2", Plugin: PluginEmptyDir, Name: "data"}}, answers{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := m.AddPod(testCtx(t), running); err != nil {
		t.Fatal(err)
	}
	m.MarkDesiredPopulated()
	plugins.expectCalls(t, "unpublish kubernetes.io/empty-dir/p2-data p2")
	if err := m.WaitForAttachAndMount(testCtx(t), running); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-plugins.calls:
		t.Fatalf("call %q for a pod whose volume was restored mounted", c)
	default:
	}
	if !m.PodVolumesUnmounted(gone.UID) {
		t.Error("the pod that was not added still has volumes")
	}
}

func TestAddPodRejectsBadSpec(t *testing.T) {
	store := &MemoryStore{}
	m, _ := startManager(t, store, newFakePlugins(store), nil)
	pod := testPod("p1", "host:x")
	pod.Spec.Volumes[0].HostPath.Path = ""
	if err := m.AddPod(testCtx(t), pod); !errors.Is(err, ErrInvalidVolume) {
		t.Fatalf("err %v, want ErrInvalidVolume", err)
	}
}
