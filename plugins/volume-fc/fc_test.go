package main

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/podhost/podhost/plugins/internal/scsi"
	"github.com/podhost/podhost/plugins/internal/scsitest"
	"github.com/podhost/podhost/plugins/internal/scsivolume"
	"github.com/podhost/podhost/sdk"
	"github.com/podhost/podhost/sdk/mount"
)

const wwn = "50060e801049cfd1"

// TestFindFC covers discovery (by WWN and LUN, with and without multipath, rescans) on a fake
// tree without devices behind it.
func TestFindFC(t *testing.T) {
	tests := []struct {
		name       string
		build      func(f *scsitest.Fake)
		target     scsi.FCTarget
		want       scsi.Disk
		wantErr    error
		wantRescan bool
	}{
		{name: "wwn and lun with multipath", build: func(f *scsitest.Fake) {
			f.AddDisk("sdb", "")
			f.AddDisk("sdc", "")
			f.AddFCLink(wwn, "0", "sdb")
			f.AddMultipath("dm-0", "sdb", "sdb", "sdc")
		}, target: scsi.FCTarget{WWNs: []string{wwn}, LUN: "0"}, want: scsi.Disk{Name: "dm-0", Paths: []string{"sdb", "sdc"}}},
		{name: "link without multipath rescans once", build: func(f *scsitest.Fake) {
			f.AddDisk("sdb", "")
			f.AddFCLink(wwn, "0", "sdb")
		}, target: scsi.FCTarget{WWNs: []string{wwn}, LUN: "0"}, want: scsi.Disk{Name: "sdb", Paths: []string{"sdb"}}, wantRescan: true},
		{name: "other lun", build: func(f *scsitest.Fake) {
			f.AddDisk("sdb", "")
			f.AddFCLink(wwn, "1", "sdb")
		}, target: scsi.FCTarget{WWNs: []string{wwn}, LUN: "0"}, wantErr: scsi.ErrNoDisk, wantRescan: true},
		{name: "no link", build: func(*scsitest.Fake) {}, target: scsi.FCTarget{WWNs: []string{wwn}, LUN: "0"}, wantErr: scsi.ErrNoDisk, wantRescan: true},
		{name: "second wwn has the multipath device", build: func(f *scsitest.Fake) {
			f.AddDisk("sdb", "")
			f.AddDisk("sdc", "")
			f.AddFCLink("aaaa", "2", "sdb")
			f.AddFCLink(wwn, "2", "sdc")
			f.AddMultipath("dm-1", "sdc", "sdc")
		}, target: scsi.FCTarget{WWNs: []string{"aaaa", wwn}, LUN: "2"}, want: scsi.Disk{Name: "dm-1", Paths: []string{"sdc"}}},
		{name: "wwid to multipath", build: func(f *scsitest.Fake) {
			f.AddDisk("sdd", "")
			f.AddMultipath("dm-3", "sdd", "sdd")
			f.AddByID("3600508b400105e210000900000490000", "dm-3")
		}, target: scsi.FCTarget{WWIDs: []string{"3600508b400105e210000900000490000"}}, want: scsi.Disk{Name: "dm-3", Paths: []string{"sdd"}}},
		{name: "wwid with spaces", build: func(f *scsitest.Fake) {
			f.AddDisk("sde", "")
			f.AddByID("SATA_disk_1", "sde")
		}, target: scsi.FCTarget{WWIDs: []string{"SATA disk 1"}}, want: scsi.Disk{Name: "sde", Paths: []string{"sde"}}, wantRescan: true},
		{name: "link out of the dev root", build: func(f *scsitest.Fake) {
			f.AddDisk("sdb", "")
			f.AddByID("abc", "../sdb")
		}, target: scsi.FCTarget{WWIDs: []string{"abc"}}, wantErr: scsi.ErrNoDisk, wantRescan: true},
		{name: "nothing named", build: func(*scsitest.Fake) {}, target: scsi.FCTarget{}, wantErr: errAny},
		{name: "wwns without lun", build: func(*scsitest.Fake) {}, target: scsi.FCTarget{WWNs: []string{wwn}}, wantErr: errAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := scsitest.New(t)
			tt.build(f)
			got, err := f.Tree.FindFC(tt.target)
			if tt.wantErr == errAny && err == nil || tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr) || tt.wantErr == nil && err != nil {
				t.Fatalf("FindFC: got error %v; want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && (got.Name != tt.want.Name || !slices.Equal(got.Paths, tt.want.Paths)) {
				t.Errorf("FindFC: got %+v; want %+v", got, tt.want)
			}
			for host := range 2 {
				if got, want := f.Scanned(host) == "- - -", tt.wantRescan; got != want {
					t.Errorf("host%d scanned %q; want rescanned %v", host, f.Scanned(host), want)
				}
			}
		})
	}
}

var errAny = errors.New("any error")

// fakeConfig is the config that points the plugin at the fake tree f.
func fakeConfig(f *scsitest.Fake) config {
	c := defaultConfig()
	c.SysfsRoot, c.DevRoot, c.Multipath, c.StateDir = f.Tree.Sys, f.Tree.Dev, f.Command("multipath"), filepath.Join(f.Root, "state")
	return c
}

// multipathVolume stages a volume on dm-0 over sdb and sdc, backed by a
// loop device, and returns the server, the fake tree and the staging path.
func multipathVolume(t *testing.T, budget time.Duration) (*server, *scsitest.Fake, string, *int) {
	scsitest.NeedRoot(t)
	f := scsitest.New(t)
	f.AddDisk("sdb", "")
	f.AddDisk("sdc", "")
	f.AddFCLink(wwn, "0", "sdb")
	f.AddMultipath("dm-0", scsitest.Loop(t, 16<<20), "sdb", "sdc")
	c := fakeConfig(f)
	c.CleanupBudget = sdk.Duration(budget)
	s := newServer()
	s.cfg.Store(&c)
	waits := 0
	s.fc.wait = func(d time.Duration) <-chan time.Time {
		if d != 10*time.Second {
			t.Errorf("waiting %v between cleanups; want the default 10s", d)
		}
		waits++
		ch := make(chan time.Time, 1)
		ch <- time.Time{}
		return ch
	}
	staging := filepath.Join(t.TempDir(), "staging")
	t.Cleanup(func() { _ = mount.Unmount(staging) })
	ctx := context.Background()
	pc, err := s.Volumes.Attach(ctx, "v", map[string]string{keyWWNs: wwn, keyLUN: "0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Volumes.Stage(ctx, scsivolume.StageArgs{ID: "v", StagingPath: staging, PublishContext: pc}); err != nil {
		t.Fatal(err)
	}
	return s, f, staging, &waits
}

// TestUnstageRetriesCleanup drives the FC cleanup retry (scenarios 48 and
// 49): multipath -f fails some times, Unstage retries every 10 s within
// its budget, and a cleanup that ran out of budget after the unmount is
// finished by the next Unstage, which finds nothing mounted.
func TestUnstageRetriesCleanup(t *testing.T) {
	tests := []struct {
		name      string
		budget    time.Duration
		failures  int // times multipath -f fails
		wantErr   bool
		wantCalls int // multipath -f calls of the first Unstage
		wantWaits int
	}{
		{name: "clean at once", budget: time.Minute, wantCalls: 1},
		{name: "map in use twice", budget: time.Minute, failures: 2, wantCalls: 3, wantWaits: 2},
		{name: "budget exhausted", budget: 20 * time.Second, failures: 5, wantErr: true, wantCalls: 3, wantWaits: 2},
		{name: "no budget", budget: 0, failures: 1, wantErr: true, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, f, staging, waits := multipathVolume(t, tt.budget)
			if tt.failures > 0 {
				f.AddRule(scsitest.Rule{Tool: "multipath", Args: []string{"-f"}, Exit: 1, Output: "map or partition in use\n", Times: tt.failures})
			}
			err := s.Volumes.Unstage(context.Background(), "v", staging)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Unstage: got %v; want error %v", err, tt.wantErr)
			}
			if got := len(f.Calls("multipath")); got != tt.wantCalls || *waits != tt.wantWaits {
				t.Errorf("multipath calls %d, waits %d; want %d, %d", got, *waits, tt.wantCalls, tt.wantWaits)
			}
			if mounted, _ := mount.IsMounted(staging); mounted {
				t.Errorf("staging path mounted after Unstage")
			}
			if tt.wantErr {
				if f.Deleted("sdb") {
					t.Errorf("sdb deleted by a failed cleanup")
				}
				// The host marks the device uncertain and the next pod
				// stages it again, on the disk the record names.
				if err := s.Volumes.Stage(context.Background(), scsivolume.StageArgs{ID: "v", StagingPath: staging}); err != nil {
					t.Fatalf("Stage after the failed Unstage: %v", err)
				}
				if mounted, _ := mount.IsMounted(staging); !mounted {
					t.Errorf("staging path not mounted by the Stage after the failed Unstage")
				}
				f.AddRule(scsitest.Rule{Tool: "multipath", Args: []string{"-f"}, Exit: 0, Times: 0}) // flushing works now, without effect
				if err := s.Volumes.Unstage(context.Background(), "v", staging); err != nil {
					t.Fatalf("second Unstage: %v", err)
				}
			} else if f.Exists("sys/block/dm-0") || f.Exists("dev/dm-0") {
				t.Errorf("dm-0 still there after the flush")
			}
			for _, d := range []string{"sdb", "sdc"} {
				if !f.Deleted(d) {
					t.Errorf("%s not deleted", d)
				}
			}
			want := []string{"-f", filepath.Join(f.Tree.Dev, "dm-0")}
			for _, c := range f.Calls("multipath") {
				if !slices.Equal(c, want) {
					t.Errorf("multipath called with %q; want %q", c, want)
				}
			}
			if err := s.Volumes.Unstage(context.Background(), "v", staging); err != nil {
				t.Errorf("Unstage after the cleanup: %v", err)
			}
		})
	}
}

// TestCleanupHoldsUpNoOtherLUN: while Unstage of one LUN waits to retry
// its cleanup, another LUN stages.
func TestCleanupHoldsUpNoOtherLUN(t *testing.T) {
	s, f, staging, _ := multipathVolume(t, time.Minute)
	f.AddDisk("sdd", scsitest.Loop(t, 16<<20))
	f.AddFCLink(wwn, "1", "sdd")
	f.AddRule(scsitest.Rule{Tool: "multipath", Args: []string{"-f"}, Exit: 1, Output: "map in use\n", Times: 1})
	waiting, release := make(chan struct{}), make(chan time.Time)
	s.fc.wait = func(time.Duration) <-chan time.Time { close(waiting); return release }
	unstaged := make(chan error, 1)
	go func() { unstaged <- s.Volumes.Unstage(context.Background(), "v", staging) }()
	<-waiting
	other := filepath.Join(t.TempDir(), "other")
	t.Cleanup(func() { _ = mount.Unmount(other) })
	staged := make(chan error, 1)
	go func() {
		staged <- s.Volumes.Stage(context.Background(), scsivolume.StageArgs{ID: "v2", StagingPath: other, Context: map[string]string{keyWWNs: wwn, keyLUN: "1"}})
	}()
	select {
	case err := <-staged:
		if err != nil {
			t.Errorf("Stage of LUN 1: %v", err)
		}
	case <-time.After(30 * time.Second): // a deadline for the condition, not a timing assertion
		t.Errorf("Stage of LUN 1 still waiting for the cleanup of LUN 0")
	}
	close(release)
	if err := <-unstaged; err != nil {
		t.Errorf("Unstage of LUN 0: %v", err)
	}
}
