package volumemanager

import (
	"errors"
	"testing"
)

// TestOpEvent checks the event of each mount result, in the kubelet's
// wording, and of a failed unpublish or unstage.
func TestOpEvent(t *testing.T) {
	fs := Volume{ID: "kubernetes.io/csi/d^h", PV: "pv1", Shared: true}
	block := Volume{ID: "kubernetes.io/csi/d^b", PV: "pv2", Shared: true, Block: true}
	private := Volume{ID: "kubernetes.io/empty-dir/u-scratch"}
	boom := errors.New("boom")
	tests := []struct {
		name string
		op   Op
		err  error
		want string // type reason message, or "" for no event
	}{
		{"stage failed", Op{Kind: OpStage, Volume: fs}, boom, `Warning FailedMount MountVolume.MountDevice failed for volume "pv1" : boom`},
		{"publish failed", Op{Kind: OpPublish, Volume: fs, Pod: "u", Name: "data"}, boom, `Warning FailedMount MountVolume.SetUp failed for volume "pv1" : boom`},
		{"private publish failed", Op{Kind: OpPublish, Volume: private, Pod: "u", Name: "scratch"}, boom, `Warning FailedMount MountVolume.SetUp failed for volume "scratch" : boom`},
		{"block stage failed", Op{Kind: OpStage, Volume: block}, boom, `Warning FailedMapVolume MapVolume.SetUpDevice failed for volume "pv2" : boom`},
		{"map failed", Op{Kind: OpMap, Volume: block, Pod: "u", Name: "raw"}, boom, `Warning FailedMapVolume MapVolume.MapPodDevice failed for volume "pv2" : boom`},
		{"map ok", Op{Kind: OpMap, Volume: block, Pod: "u", Name: "raw"}, nil, `Normal SuccessfulMountVolume MapVolume.MapPodDevice succeeded for volume "pv2"`},
		{"publish ok", Op{Kind: OpPublish, Volume: fs, Pod: "u", Name: "data"}, nil, ""},
		{"unpublish failed", Op{Kind: OpUnpublish, Volume: fs, Pod: "u", Name: "data"}, boom, `Warning FailedUnmount UnmountVolume.TearDown failed for volume "pv1" : boom`},
		{"unmap failed", Op{Kind: OpUnmap, Volume: block, Pod: "u", Name: "raw"}, boom, `Warning FailedUnmount UnmapVolume.UnmapPodDevice failed for volume "pv2" : boom`},
		{"unpublish ok", Op{Kind: OpUnpublish, Volume: fs, Pod: "u", Name: "data"}, nil, ""},
		{"unstage failed", Op{Kind: OpUnstage, Volume: fs}, boom, `Warning FailedUnmountDevice UnmountDevice failed for volume "pv1" : boom; the device stays uncertain: it is unmounted again, or staged again for the next pod`},
		{"block unstage failed", Op{Kind: OpUnstage, Volume: block}, boom, `Warning FailedUnmapDevice UnmapDevice failed for volume "pv2" : boom; the device stays uncertain: it is unmounted again, or staged again for the next pod`},
		{"unstage ok", Op{Kind: OpUnstage, Volume: fs}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, reason, msg, ok := opEvent(tt.op, tt.err)
			got := ""
			if ok {
				got = typ + " " + reason + " " + msg
			}
			if got != tt.want {
				t.Errorf("event %q, want %q", got, tt.want)
			}
		})
	}
}
