package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

// stagedPaths creates a volume and a staging dir for it, and names a
// target beside it.
func stagedPaths(t *testing.T, td *testDriver, c csiClient, name string) (id, staging, target string) {
	t.Helper()
	id = c.createVolume(t, name)
	staging, target = filepath.Join(td.dir, name+"-staging"), filepath.Join(td.dir, name+"-target")
	if err := os.Mkdir(staging, 0o750); err != nil {
		t.Fatal(err)
	}
	return id, staging, target
}

// TestNodeKeepsData shows real filesystems: data written through one
// publish is there after unstaging and staging again (no reformat), a
// read-only publish refuses writes, and the stats are the filesystem's.
func TestNodeKeepsData(t *testing.T) {
	td := startTestDriver(t, nil)
	c := dial(t, td.endpoint)
	ctx := t.Context()
	id, staging, target := stagedPaths(t, td, c, "data")
	must := func(what string, err error) { t.Helper(); wantCode(t, what, err, codes.OK) }

	must("stage", c.stage(ctx, id, staging, rwo))
	must("publish", c.publish(ctx, id, staging, target, rwo, false))
	writeFile(t, filepath.Join(target, "f"), "kept")
	stats, err := c.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: target})
	must("stats", err)
	bytes := stats.GetUsage()[0]
	if bytes.GetUnit() != csi.VolumeUsage_BYTES || bytes.GetTotal() <= 32<<20 || bytes.GetTotal() > 64<<20 || bytes.GetUsed() <= 0 || bytes.GetAvailable() <= 0 {
		t.Errorf("stats of a 64 MiB ext4 volume: %v", stats.GetUsage())
	}
	wantCode(t, "DeleteVolume while staged", func() error {
		_, err := c.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id})
		return err
	}(), codes.FailedPrecondition)
	wantCode(t, "unstage while published", c.unstage(ctx, id, staging), codes.FailedPrecondition)
	must("unpublish", c.unpublish(ctx, id, target))
	must("unstage", c.unstage(ctx, id, staging))
	if mounted := mountsBelow(t, td.dir); len(mounted) != 0 {
		t.Fatalf("mounts after unstage: %v", mounted)
	}
	if dev := td.loopOf(t, id); dev != "" {
		t.Fatalf("loop device after unstage: %s", dev)
	}

	must("stage again", c.stage(ctx, id, staging, rwo))
	if err := syscall.Unmount(staging, 0); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "publish with the staging mount gone", c.publish(ctx, id, staging, target, rwo, true), codes.FailedPrecondition)
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("target after a failed publish: %v, want it removed", err)
	}
	must("stage to mount it again", c.stage(ctx, id, staging, rwo))
	must("publish read-only", c.publish(ctx, id, staging, target, rwo, true))
	if b, err := os.ReadFile(filepath.Join(target, "f")); err != nil || string(b) != "kept" {
		t.Fatalf("data after re-stage: %q, %v", b, err)
	}
	if err := os.WriteFile(filepath.Join(target, "g"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("writing to a read-only publish: %v, want EROFS", err)
	}
	wantCode(t, "publish again read-write", c.publish(ctx, id, staging, target, rwo, false), codes.AlreadyExists)
	must("unpublish", c.unpublish(ctx, id, target))
	must("unpublish again", c.unpublish(ctx, id, target))
	must("unstage", c.unstage(ctx, id, staging))
}

// TestNodeBlock publishes a block volume: the target is the loop device,
// of the volume's size.
func TestNodeBlock(t *testing.T) {
	td := startTestDriver(t, nil)
	c := dial(t, td.endpoint)
	ctx := t.Context()
	id, staging, target := stagedPaths(t, td, c, "block")
	block := &csi.VolumeCapability{
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
	}
	wantCode(t, "stage", c.stage(ctx, id, staging, block), codes.OK)
	wantCode(t, "publish as mount", c.publish(ctx, id, staging, target, rwo, false), codes.InvalidArgument)
	wantCode(t, "publish", c.publish(ctx, id, staging, target, block, false), codes.OK)
	fi, err := os.Stat(target)
	if err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("target %v, %v: want a block device", fi, err)
	}
	stats, err := c.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: target})
	wantCode(t, "stats", err, codes.OK)
	if u := stats.GetUsage(); len(u) != 1 || u[0].GetTotal() != 64<<20 {
		t.Errorf("block stats %v, want a total of 64 MiB", u)
	}
	wantCode(t, "unpublish", c.unpublish(ctx, id, target), codes.OK)
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("target after unpublish: %v", err)
	}
	wantCode(t, "unstage", c.unstage(ctx, id, staging), codes.OK)
}

// TestNodeUndoesWhatNeverHappened: unstage and unpublish of paths that
// never existed succeed; calls on unknown volumes are NOT_FOUND.
func TestNodeUndoesWhatNeverHappened(t *testing.T) {
	td := startTestDriver(t, nil)
	c := dial(t, td.endpoint)
	ctx := t.Context()
	id := c.createVolume(t, "never")
	missing := filepath.Join(td.dir, "missing")
	wantCode(t, "unstage", c.unstage(ctx, id, missing), codes.OK)
	wantCode(t, "unpublish", c.unpublish(ctx, id, missing), codes.OK)
	wantCode(t, "stage at a missing dir", c.stage(ctx, id, missing, rwo), codes.FailedPrecondition)
	wantCode(t, "publish unstaged", c.publish(ctx, id, missing, filepath.Join(td.dir, "t"), rwo, false), codes.FailedPrecondition)
	unknown := volumeID("unknown")
	wantCode(t, "unstage unknown", c.unstage(ctx, unknown, missing), codes.NotFound)
	wantCode(t, "unpublish unknown", c.unpublish(ctx, unknown, missing), codes.NotFound)
	wantCode(t, "stage unknown", c.stage(ctx, unknown, td.dir, rwo), codes.NotFound)
}

// TestCapabilitiesSwitchedOff: a driver without STAGE_UNSTAGE_VOLUME and
// GET_VOLUME_STATS says so, refuses those RPCs, and publishes by
// attaching and mounting at the target itself.
func TestCapabilitiesSwitchedOff(t *testing.T) {
	off := false
	td := startTestDriver(t, func(fc *fileConfig) {
		fc.Capabilities = fileCaps{StageUnstage: &off, VolumeStats: &off}
	})
	c := dial(t, td.endpoint)
	ctx := t.Context()
	caps, err := c.NodeGetCapabilities(ctx, &csi.NodeGetCapabilitiesRequest{})
	wantCode(t, "NodeGetCapabilities", err, codes.OK)
	var got []csi.NodeServiceCapability_RPC_Type
	for _, c := range caps.GetCapabilities() {
		got = append(got, c.GetRpc().GetType())
	}
	if slices.Contains(got, csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME) || slices.Contains(got, csi.NodeServiceCapability_RPC_GET_VOLUME_STATS) {
		t.Errorf("capabilities %v with staging and stats off", got)
	}
	id, staging, target := stagedPaths(t, td, c, "nostage")
	wantCode(t, "stage", c.stage(ctx, id, staging, rwo), codes.Unimplemented)
	_, err = c.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: target})
	wantCode(t, "stats", err, codes.Unimplemented)
	wantCode(t, "publish", c.publish(ctx, id, "", target, rwo, false), codes.OK)
	writeFile(t, filepath.Join(target, "f"), "x")
	wantCode(t, "unpublish", c.unpublish(ctx, id, target), codes.OK)
	if dev := td.loopOf(t, id); dev != "" {
		t.Errorf("loop device after the last unpublish: %s", dev)
	}
}

// TestFaultsOnTheWire: configured faults reach the CO with their codes,
// in order, and the call log records them.
func TestFaultsOnTheWire(t *testing.T) {
	td := startTestDriver(t, func(fc *fileConfig) {
		fc.Faults = []fileFault{
			{RPC: "NodeStageVolume", Action: "fail", Code: "DeadlineExceeded", Times: 1},
			{RPC: "NodeStageVolume", Action: "fail", Code: "InvalidArgument", Times: 1},
			{RPC: "NodePublishVolume", Action: "hang", Times: 1},
			{RPC: "NodeUnpublishVolume", Action: "delay", Delay: "10ms", Times: 1},
		}
	})
	c := dial(t, td.endpoint)
	ctx := t.Context()
	id, staging, target := stagedPaths(t, td, c, "faults")
	wantCode(t, "stage 1", c.stage(ctx, id, staging, rwo), codes.DeadlineExceeded)
	wantCode(t, "stage 2", c.stage(ctx, id, staging, rwo), codes.InvalidArgument)
	wantCode(t, "stage 3", c.stage(ctx, id, staging, rwo), codes.OK)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	wantCode(t, "hung publish", c.publish(short, id, staging, target, rwo, false), codes.DeadlineExceeded)
	wantCode(t, "publish", c.publish(ctx, id, staging, target, rwo, false), codes.OK)
	wantCode(t, "delayed unpublish", c.unpublish(ctx, id, target), codes.OK)
	wantCode(t, "unstage", c.unstage(ctx, id, staging), codes.OK)

	// The hung call's record is written when the driver gives up on it,
	// which may be after the client's deadline; the driver sees either
	// its copy of the deadline pass or the client cancel, whichever
	// comes first, so its record says DeadlineExceeded or Canceled.
	want := []string{
		"NodeStageVolume DeadlineExceeded fail", "NodeStageVolume InvalidArgument fail", "NodeStageVolume OK ",
		"NodePublishVolume DeadlineExceeded hang", "NodePublishVolume OK ", "NodeUnpublishVolume OK delay", "NodeUnstageVolume OK ",
	}
	var got []string
	waitFor(t, "the call log", func() bool {
		got = got[:0]
		for _, r := range td.calls(t) {
			if r.VolumeID == id && r.RPC != "CreateVolume" {
				if r.Fault == "hang" && r.Code == "Canceled" {
					r.Code = "DeadlineExceeded"
				}
				got = append(got, r.RPC+" "+r.Code+" "+r.Fault)
				if r.RPC == "NodeStageVolume" && r.StagingTargetPath != staging {
					t.Errorf("record %+v: staging path %q", r, staging)
				}
			}
		}
		slices.Sort(got)
		return slices.Equal(got, sorted(want))
	}, func() string { return fmt.Sprintf("records %q, want %q", got, sorted(want)) })
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// TestNodeStageFailureLeavesNothing: a stage that fails (here the mount,
// after mkfs) leaves no loop device, mount or record behind, so the
// volume can be deleted, or staged again.
func TestNodeStageFailureLeavesNothing(t *testing.T) {
	td := startTestDriver(t, nil)
	c := dial(t, td.endpoint)
	ctx := t.Context()
	id, staging, _ := stagedPaths(t, td, c, "fails")
	bad := &csi.VolumeCapability{
		AccessMode: rwo.GetAccessMode(),
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{MountFlags: []string{"no-such-option"}}},
	}
	wantCode(t, "stage with a bad mount flag", c.stage(ctx, id, staging, bad), codes.Internal)
	if mounted := mountsBelow(t, td.dir); len(mounted) != 0 {
		t.Errorf("mounts after a failed stage: %v", mounted)
	}
	if dev := td.loopOf(t, id); dev != "" {
		t.Errorf("loop device after a failed stage: %s", dev)
	}
	if _, err := os.Stat(filepath.Join(td.stateDir, "node", id+".json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("node record after a failed stage: %v", err)
	}
	wantCode(t, "stage", c.stage(ctx, id, staging, rwo), codes.OK)
	wantCode(t, "unstage", c.unstage(ctx, id, staging), codes.OK)
	_, err := c.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id})
	wantCode(t, "DeleteVolume", err, codes.OK)
	if _, err := os.Stat(filepath.Join(td.stateDir, "volumes", id+".img")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("image after DeleteVolume: %v", err)
	}
}

// TestSlowStageFinishesAfterTimeout: a delayed NodeStageVolume times out
// at the CO but stages the volume all the same, the "uncertain" outcome
// a CO must clean up after.
func TestSlowStageFinishesAfterTimeout(t *testing.T) {
	td := startTestDriver(t, func(fc *fileConfig) {
		fc.Faults = []fileFault{{RPC: "NodeStageVolume", Action: "delay", Delay: "300ms", Times: 1}}
	})
	c := dial(t, td.endpoint)
	id, staging, _ := stagedPaths(t, td, c, "slow")
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	wantCode(t, "slow stage", c.stage(short, id, staging, rwo), codes.DeadlineExceeded)
	var rec callRecord
	waitFor(t, "the slow stage to finish", func() bool {
		for _, r := range td.calls(t) {
			if r.RPC == "NodeStageVolume" {
				rec = r
				return true
			}
		}
		return false
	}, func() string { return "no NodeStageVolume in the call log" })
	if rec.Code != "OK" || rec.Fault != "delay" {
		t.Errorf("call log: %+v, want the delayed stage to end OK", rec)
	}
	if mounted := mountsBelow(t, td.dir); !slices.Contains(mounted, staging) {
		t.Errorf("mounts %v after the slow stage, want %s", mounted, staging)
	}
	wantCode(t, "unstage", c.unstage(t.Context(), id, staging), codes.OK)
}

// TestFaultOnCreateByName: a fault names a volume by the ID its name
// makes, before it exists; the call log records that ID for CreateVolume.
func TestFaultOnCreateByName(t *testing.T) {
	id := volumeID("doomed")
	td := startTestDriver(t, func(fc *fileConfig) {
		fc.Faults = []fileFault{{RPC: "CreateVolume", Action: "fail", Code: "ResourceExhausted", Times: 1, Volume: id}}
	})
	c := dial(t, td.endpoint)
	c.createVolume(t, "spared")
	_, err := c.CreateVolume(t.Context(), &csi.CreateVolumeRequest{Name: "doomed", VolumeCapabilities: []*csi.VolumeCapability{rwo}})
	wantCode(t, "CreateVolume doomed", err, codes.ResourceExhausted)
	if got := c.createVolume(t, "doomed"); got != id {
		t.Errorf("volume ID %s, want %s", got, id)
	}
	var got []string
	for _, r := range td.calls(t) {
		if r.RPC == "CreateVolume" {
			got = append(got, r.VolumeID+" "+r.Code)
		}
	}
	want := []string{volumeID("spared") + " OK", id + " ResourceExhausted", id + " OK"}
	if !slices.Equal(got, want) {
		t.Errorf("CreateVolume records %q, want %q", got, want)
	}
}
