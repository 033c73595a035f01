package volumemanager

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

const absent MountState = -1

// TestTransitions checks each row of the transition table (doc.go, rules 1-5)
// that a plugin result drives: the device and pod states before, the
// operation and its error, the states after.
func TestTransitions(t *testing.T) {
	tests := []struct {
		row              string
		kind             OpKind
		dev              MountState
		devReconstructed bool
		pod              MountState // absent: no pod entry
		podReconstructed bool
		err              string
		wantDev, wantPod MountState
	}{
		{"T1 stage ok from notMounted", OpStage, NotMounted, false, absent, false, "ok", Mounted, absent},
		{"T1 stage ok from uncertain", OpStage, Uncertain, true, absent, false, "ok", Mounted, absent},
		{"T2 stage uncertain from notMounted", OpStage, NotMounted, false, absent, false, "deadline", Uncertain, absent},
		{"T2 no status is uncertain", OpStage, NotMounted, false, absent, false, "nostatus", Uncertain, absent},
		{"T2 plugin died is uncertain", OpStage, NotMounted, false, absent, false, "died", Uncertain, absent},
		{"T3 stage uncertain stays", OpStage, Uncertain, false, absent, false, "aborted", Uncertain, absent},
		{"T4 stage final clears uncertain", OpStage, Uncertain, false, absent, false, "invalid", NotMounted, absent},
		{"T5 stage final keeps reconstructed", OpStage, Uncertain, true, absent, false, "invalid", Uncertain, absent},
		{"T6 stage final from notMounted", OpStage, NotMounted, false, absent, false, "invalid", NotMounted, absent},
		{"T6 stage transient from notMounted", OpStage, NotMounted, false, absent, false, "transient", NotMounted, absent},
		{"T7 stage transient keeps uncertain", OpStage, Uncertain, false, absent, false, "transient", Uncertain, absent},
		{"T9 publish ok from absent", OpPublish, Mounted, false, absent, false, "ok", Mounted, Mounted},
		{"T9 publish ok from uncertain", OpPublish, Mounted, false, Uncertain, true, "ok", Mounted, Mounted},
		{"T9 map ok", OpMap, Mounted, false, absent, false, "ok", Mounted, Mounted},
		{"T10 publish uncertain from absent", OpPublish, Mounted, false, absent, false, "exhausted", Mounted, Uncertain},
		{"T10 map uncertain from absent", OpMap, Mounted, false, absent, false, "canceled", Mounted, Uncertain},
		{"T11 publish final removes uncertain", OpPublish, Mounted, false, Uncertain, false, "notfound", Mounted, absent},
		{"T12 publish final keeps reconstructed", OpPublish, Mounted, false, Uncertain, true, "invalid", Mounted, Uncertain},
		{"T13 publish final from absent", OpPublish, Mounted, false, absent, false, "invalid", Mounted, absent},
		{"T13 publish transient from absent", OpPublish, Mounted, false, absent, false, "transient", Mounted, absent},
		{"publish transient keeps uncertain", OpPublish, Mounted, false, Uncertain, false, "transient", Mounted, Uncertain},
		{"T15 unpublish error from mounted", OpUnpublish, Mounted, false, Mounted, false, "invalid", Mounted, Uncertain},
		{"T15 unpublish error from uncertain", OpUnpublish, Mounted, false, Uncertain, false, "deadline", Mounted, Uncertain},
		{"T15 unmap error", OpUnmap, Mounted, false, Mounted, false, "internal", Mounted, Uncertain},
		{"unpublish transient changes nothing", OpUnpublish, Mounted, false, Mounted, false, "transient", Mounted, Mounted},
		{"T16 unpublish ok from mounted", OpUnpublish, Mounted, false, Mounted, false, "ok", Mounted, absent},
		{"T16 unpublish ok from uncertain", OpUnpublish, Mounted, false, Uncertain, true, "ok", Mounted, absent},
		{"T16 unmap ok", OpUnmap, Mounted, false, Uncertain, false, "ok", Mounted, absent},
		{"T17 unstage final from mounted", OpUnstage, Mounted, false, absent, false, "invalid", Uncertain, absent},
		{"T17 unstage uncertain from mounted", OpUnstage, Mounted, false, absent, false, "deadline", Uncertain, absent},
		{"T17 unstage error from uncertain", OpUnstage, Uncertain, false, absent, false, "internal", Uncertain, absent},
		{"unstage transient changes nothing", OpUnstage, Mounted, false, absent, false, "transient", Mounted, absent},
		{"T18 unstage ok from mounted", OpUnstage, Mounted, false, absent, false, "ok", NotMounted, absent},
		{"T18 unstage ok from uncertain", OpUnstage, Uncertain, true, absent, false, "ok", NotMounted, absent},
	}
	const uid = types.UID("p1")
	vol := Volume{ID: "kubernetes.io/csi/drv^h", Plugin: PluginCSI, Shared: true}
	for _, tt := range tests {
		t.Run(tt.row, func(t *testing.T) {
			r := NewReconciler(testClassifier)
			d := &device{vol: vol, state: tt.dev, reconstructed: tt.devReconstructed, pods: map[types.UID]*podMount{}}
			if tt.pod != absent {
				d.pods[uid] = &podMount{name: "data", state: tt.pod, reconstructed: tt.podReconstructed}
			}
			r.actual[vol.ID] = d
			op := Op{Kind: tt.kind, Volume: vol, seq: 1}
			if tt.kind != OpStage && tt.kind != OpUnstage {
				op.Pod, op.Name = uid, "data"
			}
			r.inflight[vol.ID] = op
			err, ok := namedErr(tt.err)
			if !ok {
				err = codeErr(tt.err)
			}
			r.Complete(time.Unix(0, 0), op, err)
			if d.state != tt.wantDev {
				t.Errorf("device %s, want %s", d.state, tt.wantDev)
			}
			got := absent
			if pm := d.pods[uid]; pm != nil {
				got = pm.state
			}
			if got != tt.wantPod {
				t.Errorf("pod %s, want %s", got, tt.wantPod)
			}
			if _, busy := r.inflight[vol.ID]; busy {
				t.Error("operation still in flight after Complete")
			}
			_, backedOff := r.backoff[op.key()]
			if backedOff != (err != nil) {
				t.Errorf("back-off entry %v after err %v", backedOff, err)
			}
		})
	}
}

// TestStepChoosesOperation checks which operation a step starts for one
// desired or undesired pod of a shared volume, by state (T8: a staged
// device is not staged again; rule 3: no unstage while a pod may have
// the volume published, and none before the desired state is populated).
func TestStepChoosesOperation(t *testing.T) {
	tests := []struct {
		name      string
		desired   bool
		populated bool
		dev       MountState
		pod       MountState
		want      string // the operation's kind, or "" for none
	}{
		{"T8 staged device: publish only", true, true, Mounted, absent, "publish"},
		{"uncertain device: stage again", true, true, Uncertain, absent, "stage"},
		{"notMounted device: stage", true, true, NotMounted, absent, "stage"},
		{"uncertain pod mount: publish again", true, true, Mounted, Uncertain, "publish"},
		{"mounted: nothing", true, true, Mounted, Mounted, ""},
		{"undesired mounted pod: unpublish", false, true, Mounted, Mounted, "unpublish"},
		{"undesired uncertain pod: unpublish", false, true, Uncertain, Uncertain, "unpublish"},
		{"no pods, staged: unstage", false, true, Mounted, absent, "unstage"},
		{"no pods, uncertain: unstage", false, true, Uncertain, absent, "unstage"},
		{"no pods, notMounted: dropped", false, true, NotMounted, absent, ""},
		{"not populated: no unpublish", false, false, Mounted, Mounted, ""},
		{"not populated: no unstage", false, false, Uncertain, absent, ""},
		{"not populated: mounts still run", true, false, Uncertain, absent, "stage"},
	}
	const uid = types.UID("p1")
	vol := Volume{ID: "kubernetes.io/csi/drv^h", Plugin: PluginCSI, Shared: true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReconciler(testClassifier)
			d := &device{vol: vol, state: tt.dev, pods: map[types.UID]*podMount{}}
			if tt.pod != absent {
				d.pods[uid] = &podMount{name: "data", state: tt.pod}
			}
			r.actual[vol.ID] = d
			if tt.desired {
				r.SetPod(uid, []PodVolume{{Name: "data", Volume: vol}})
			}
			if tt.populated {
				r.MarkDesiredPopulated()
			}
			ops := r.Step(time.Unix(0, 0))
			got := ""
			if len(ops) > 1 {
				t.Fatalf("ops %v, want at most one", ops)
			}
			if len(ops) == 1 {
				got = ops[0].Kind.String()
			}
			if got != tt.want {
				t.Errorf("op %q, want %q", got, tt.want)
			}
			if ops := r.Step(time.Unix(0, 0)); len(ops) != 0 {
				t.Errorf("second step started %v while one is in flight", ops)
			}
		})
	}
}

// TestBackoff checks the back-off sequence of one operation key.
func TestBackoff(t *testing.T) {
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 16 * time.Second, 32 * time.Second, 64 * time.Second, MaxBackoff, MaxBackoff}
	var b backoff
	now := time.Unix(0, 0)
	for i, w := range want {
		b = b.failed(now)
		if b.wait != w || !b.retryAt.Equal(now.Add(w)) {
			t.Fatalf("failure %d: wait %s retry at %s, want %s", i+1, b.wait, b.retryAt.Sub(now), w)
		}
	}
}
