package main

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/podhost/podhost/plugins/internal/scsitest"
	"github.com/podhost/podhost/plugins/internal/scsivolume"
	"github.com/podhost/podhost/sdk/mount"
)

// TestSeveralPortals logs in through two portals (scenarios 54 and 55):
// with both up the volume is their multipath device, flushed and logged
// out of at both portals on Unstage; with one down, that portal is tried
// in each of the five attempts and the volume goes on with one path.
func TestSeveralPortals(t *testing.T) {
	const second = "10.0.0.2:3260"
	tests := []struct {
		name          string
		secondUp      bool
		wantDisk      string // "dm" for the multipath device, else a plain disk
		wantDiscovers int    // --discover calls at the second portal
	}{
		{name: "both portals up", secondUp: true, wantDisk: "dm", wantDiscovers: 1},
		{name: "second portal down", wantDisk: "sd", wantDiscovers: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scsitest.NeedRoot(t)
			f := scsitest.New(t)
			lun := scsitest.Loop(t, 16<<20)
			first := scsitest.Target{Portal: portal, IQN: iqn, LUNs: map[string]string{"0": lun}}
			if tt.secondUp {
				first.Multipath = "dm-0"
			}
			f.AddTarget(first)
			if tt.secondUp {
				f.AddTarget(scsitest.Target{Portal: second, IQN: iqn, LUNs: map[string]string{"0": lun}, Multipath: "dm-0"})
			}
			s, _ := iscsiServer(t, f)
			staging := filepath.Join(t.TempDir(), "staging")
			t.Cleanup(func() { _ = mount.Unmount(staging) })
			ctx := context.Background()
			err := s.Volumes.Stage(ctx, scsivolume.StageArgs{ID: "v", StagingPath: staging, Context: vc("0", keyPortals, "10.0.0.2")})
			if err != nil {
				t.Fatalf("Stage: %v", err)
			}
			var discovers, flushes int
			for _, c := range f.Calls("iscsiadm") {
				if slices.Contains(c, "--discover") && slices.Contains(c, second) {
					discovers++
				}
			}
			if discovers != tt.wantDiscovers {
				t.Errorf("--discover calls at %s: %d; want %d", second, discovers, tt.wantDiscovers)
			}
			if err := s.Volumes.Unstage(ctx, "v", staging); err != nil {
				t.Fatalf("Unstage: %v", err)
			}
			for _, c := range f.Calls("multipath") {
				if slices.Equal(c, []string{"-f", filepath.Join(f.Tree.Dev, "dm-0")}) {
					flushes++
				}
			}
			if want := map[string]int{"dm": 1, "sd": 0}[tt.wantDisk]; flushes != want {
				t.Errorf("multipath -f dm-0 calls: %d; want %d", flushes, want)
			}
			var logouts []string
			for _, c := range f.Calls("iscsiadm") {
				if slices.Contains(c, "--logout") {
					logouts = append(logouts, c[slices.Index(c, "-p")+1])
				}
			}
			if want := []string{portal, second}; !slices.Equal(logouts, want) {
				t.Errorf("logouts at %q; want %q (every portal of the volume)", logouts, want)
			}
			for _, p := range []string{portal, second} {
				if f.LoggedIn(p, iqn) {
					t.Errorf("still logged in at %s", p)
				}
			}
		})
	}
}
