package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// answers is a Reconstructor from a fixed table keyed pod/name.
type answers map[string]Reconstructed

func (a answers) Reconstruct(_ context.Context, d PodVolumeDir) (Reconstructed, error) {
	if ans, ok := a[string(d.Pod)+"/"+d.Name]; ok {
		return ans, nil
	}
	if d.Pod == "p9" {
		return Reconstructed{}, ErrNotMounted
	}
	return Reconstructed{}, errors.New("no vol_data.json")
}

func TestReconstruct(t *testing.T) {
	shared := Volume{ID: "kubernetes.io/csi/d^h", Plugin: PluginCSI, Shared: true}
	dir := func(uid, name string) PodVolumeDir {
		return PodVolumeDir{Pod: types.UID(uid), Plugin: PluginCSI, Name: name}
	}
	rec := func(dev MountState, pods ...PodRecord) Record { return Record{Volume: shared, Device: dev, Pods: pods} }
	pod := func(uid string, st MountState) PodRecord {
		return PodRecord{Pod: types.UID(uid), Name: "data", State: st}
	}
	tests := []struct {
		name    string
		recs    []Record
		dirs    []PodVolumeDir
		answers answers
		want    []Record
		wantErr string
	}{
		{"mounted record with dir stays mounted", []Record{rec(Mounted, pod("p1", Mounted))}, []PodVolumeDir{dir("p1", "data")}, nil,
			[]Record{rec(Mounted, pod("p1", Mounted))}, ""},
		{"mounted record without dir becomes uncertain", []Record{rec(Mounted, pod("p1", Mounted))}, nil, nil,
			[]Record{rec(Mounted, pod("p1", Uncertain))}, ""},
		{"uncertain record stays uncertain", []Record{rec(Uncertain, pod("p1", Uncertain))}, []PodVolumeDir{dir("p1", "data")}, nil,
			[]Record{rec(Uncertain, pod("p1", Uncertain))}, ""},
		{"staged device without users stays staged", []Record{rec(Mounted)}, nil, nil, []Record{rec(Mounted)}, ""},
		{"T19 dir without record, plugin unsure", nil, []PodVolumeDir{dir("p1", "data")}, answers{"p1/data": {Volume: shared}},
			[]Record{rec(Uncertain, pod("p1", Uncertain))}, ""},
		{"dir without record, plugin sees mounts", nil, []PodVolumeDir{dir("p1", "data")}, answers{"p1/data": {Volume: shared, Published: true, Staged: true}},
			[]Record{rec(Mounted, pod("p1", Mounted))}, ""},
		{"dir joins a recorded volume", []Record{rec(Mounted, pod("p1", Mounted))}, []PodVolumeDir{dir("p1", "data"), dir("p2", "data")},
			answers{"p2/data": {Volume: shared, Published: true}},
			[]Record{rec(Mounted, pod("p1", Mounted), pod("p2", Mounted))}, ""},
		{"failed reconstruction stays in use", nil, []PodVolumeDir{dir("p1", "data")}, nil,
			[]Record{{Volume: Volume{ID: "kubernetes.io/csi/p1-data", Plugin: PluginCSI, Unresolved: true}, Pods: []PodRecord{pod("p1", Uncertain)}}},
			"volume reconstruction failed: pod p1 volume data (kubernetes.io/csi): no vol_data.json"},
		{"failed reconstruction beside a record", []Record{rec(Mounted, pod("p1", Mounted))}, []PodVolumeDir{dir("p1", "data"), dir("p2", "data")}, nil,
			[]Record{rec(Mounted, pod("p1", Mounted)), {Volume: Volume{ID: "kubernetes.io/csi/p2-data", Plugin: PluginCSI, Unresolved: true}, Pods: []PodRecord{pod("p2", Uncertain)}}},
			"pod p2 volume data"},
		{"placeholder record is asked again", []Record{{Volume: Volume{ID: "kubernetes.io/csi/p1-data", Plugin: PluginCSI, Unresolved: true}, Pods: []PodRecord{pod("p1", Uncertain)}}},
			[]PodVolumeDir{dir("p1", "data")}, answers{"p1/data": {Volume: shared, Published: true, Staged: true}},
			[]Record{rec(Mounted, pod("p1", Mounted))}, ""},
		{"record of another volume mode does not explain a dir", []Record{rec(Mounted, pod("p1", Mounted))},
			[]PodVolumeDir{{Pod: "p1", Plugin: PluginCSI, Name: "data", Block: true}}, nil,
			[]Record{rec(Mounted, pod("p1", Uncertain)), {Volume: Volume{ID: "kubernetes.io/csi/p1-data", Plugin: PluginCSI, Block: true, Unresolved: true}, Pods: []PodRecord{pod("p1", Uncertain)}}},
			"pod p1 volume data"},
		{"answer of another plugin is refused", nil, []PodVolumeDir{dir("p1", "data")}, answers{"p1/data": {Volume: Volume{ID: "kubernetes.io/fc/x", Plugin: PluginFC, Shared: true}}},
			[]Record{{Volume: Volume{ID: "kubernetes.io/csi/p1-data", Plugin: PluginCSI, Unresolved: true}, Pods: []PodRecord{pod("p1", Uncertain)}}},
			"answered with volume kubernetes.io/fc/x"},
		{"nothing mounted is left out", nil, []PodVolumeDir{dir("p9", "data")}, nil, []Record{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Reconstruct(context.Background(), tt.recs, tt.dirs, tt.answers)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrReconstruct)) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// TestRestoreMarksUncertainReconstructed checks that restored uncertain
// entries are marked reconstructed (so T5 and T12 apply) and mounted
// ones are not mounted again.
func TestRestoreMarksUncertainReconstructed(t *testing.T) {
	v := Volume{ID: "kubernetes.io/csi/d^h", Plugin: PluginCSI, Shared: true}
	r := NewReconciler(testClassifier)
	r.Restore(time.Unix(0, 0), []Record{{Volume: v, Device: Uncertain, Pods: []PodRecord{{Pod: "p1", Name: "data", State: Uncertain}, {Pod: "p2", Name: "data", State: Mounted}}}})
	d := r.actual[v.ID]
	if !d.reconstructed || !d.pods["p1"].reconstructed || d.pods["p2"].reconstructed {
		t.Fatalf("reconstructed flags: device %v p1 %v p2 %v", d.reconstructed, d.pods["p1"].reconstructed, d.pods["p2"].reconstructed)
	}
	r.SetPod("p2", []PodVolume{{Name: "data", Volume: v}})
	ops := r.Step(time.Unix(0, 0))
	if len(ops) != 1 || ops[0].Kind != OpStage {
		t.Fatalf("ops %v, want one stage of the uncertain device", ops)
	}
}

// flakyReconstructor fails for its first fails calls, then answers ans.
type flakyReconstructor struct {
	mu    sync.Mutex
	fails int
	calls int
	ans   Reconstructed
}

func (f *flakyReconstructor) Reconstruct(context.Context, PodVolumeDir) (Reconstructed, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.calls <= f.fails {
		return Reconstructed{}, fmt.Errorf("plugin volume-iscsi: Reconstruct: attempt %d: %w", f.calls, codeErr("Unavailable"))
	}
	return f.ans, nil
}

// countedFailures is Metrics in memory.
type countedFailures struct {
	mu  sync.Mutex
	got map[string]int
}

func (c *countedFailures) ReconstructionFailed(plugin string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got[plugin]++
}

func (c *countedFailures) count(plugin string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got[plugin]
}

// TestManagerRetriesFailedReconstruction: a failed reconstruction of an
// iSCSI pod volume gives an event and a metric per attempt, is asked again
// after the back-off (500 ms, then 1 s) on the injected clock, stays in
// use meanwhile, and once the plugin answers the normal teardown runs:
// no plugin call touches the volume before that.
func TestManagerRetriesFailedReconstruction(t *testing.T) {
	vol := Volume{ID: "kubernetes.io/iscsi/10.0.0.1:3260:iqn.x:0:0", Plugin: PluginISCSI, Shared: true,
		ISCSI: &v1.ISCSIPersistentVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: "iqn.x:0"}}
	store := &MemoryStore{}
	plugins := newFakePlugins(store)
	events := &recordedEvents{ch: make(chan string, 10)}
	metrics := &countedFailures{got: map[string]int{}}
	clock := lifecycletest.NewFakeClock(time.Unix(0, 0))
	m := NewManager(Config{Plugins: plugins, Classifier: testClassifier, Store: store, Clock: clock, Resolver: testResolver{}, Events: events, Metrics: metrics})
	recon := &flakyReconstructor{fails: 2, ans: Reconstructed{Volume: vol, Published: true, Staged: true}}
	dir := PodVolumeDir{Pod: "p1", Plugin: PluginISCSI, Name: "data"}
	err := m.Reconstruct(testCtx(t), fixedDirs{dir}, recon)
	if !errors.Is(err, ErrReconstruct) {
		t.Fatalf("Reconstruct: %v, want ErrReconstruct", err)
	}
	want := `p1 Warning FailedReconstructVolume reconstruction of volume "data" (kubernetes.io/iscsi) after the host restart failed; the volume stays in use and is retried: plugin volume-iscsi: Reconstruct: attempt 1: rpc error: code = Unavailable`
	if got := <-events.ch; got != want {
		t.Fatalf("event\n%s\nwant\n%s", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	m.MarkDesiredPopulated() // the pod is gone

	for attempt, wait := range []time.Duration{InitialBackoff, 2 * InitialBackoff} {
		if got := m.VolumesInUse(); len(got) != 1 || got[0] != "kubernetes.io/iscsi/p1-data" {
			t.Fatalf("attempt %d: in use %v, want the placeholder", attempt+1, got)
		}
		clock.Step(wait)
		if attempt == 0 {
			select {
			case ev := <-events.ch:
				if !strings.Contains(ev, "FailedReconstructVolume") || !strings.Contains(ev, "attempt 2") {
					t.Fatalf("retry event %q", ev)
				}
			case <-testCtx(t).Done():
				t.Fatal("no retry after the back-off")
			}
		}
	}
	plugins.expectCalls(t, "unpublish "+string(vol.ID)+" p1", "unstage "+string(vol.ID))
	if n := metrics.count(PluginISCSI); n != 2 {
		t.Errorf("failures counted %d, want 2", n)
	}
	if u := m.Unresolved(); len(u) != 0 {
		t.Errorf("unresolved %v after the answer", u)
	}
	events.mu.Lock()
	defer events.mu.Unlock()
	if len(events.got) != 2 {
		t.Errorf("events %q, want 2", events.got)
	}
}
