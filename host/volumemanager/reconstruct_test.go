package volumemanager

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// answers is a Reconstructor from a fixed table keyed pod/name.
type answers map[string]Reconstructed

func (a answers) Reconstruct(_ context.Context, d PodVolumeDir) (Reconstructed, error) {
	if ans, ok := a[string(d.Pod)+"/"+d.Name]; ok {
		return ans, nil
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
	r.Restore([]Record{{Volume: v, Device: Uncertain, Pods: []PodRecord{{Pod: "p1", Name: "data", State: Uncertain}, {Pod: "p2", Name: "data", State: Mounted}}}})
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
