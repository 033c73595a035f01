package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/plugins/internal/scsitest"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk/mount"
)

const lunSize = 16 << 20

// TestBlockAndMetrics maps a raw block volume and a filesystem volume of
// a loop-backed LUN and checks metrics and Reconstruct on both: the block
// capacity is the device size read with BLKGETSIZE64, the filesystem
// figures come from statfs.
func TestBlockAndMetrics(t *testing.T) {
	blockCap := &volumev1.Capability{AccessType: &volumev1.Capability_Block{Block: &volumev1.Capability_BlockVolume{}}}
	fsCap := &volumev1.Capability{AccessType: &volumev1.Capability_Mount{Mount: &volumev1.Capability_MountVolume{FsType: "ext4"}}}
	optsCap := &volumev1.Capability{AccessType: &volumev1.Capability_Mount{Mount: &volumev1.Capability_MountVolume{FsType: "ext4", MountFlags: []string{"noatime", "commit=30"}}}}
	tests := []struct {
		name     string
		cap      *volumev1.Capability
		readonly bool
		// wantMount and wantSuper are options the staging mount must show.
		wantMount, wantSuper string
	}{
		{name: "block", cap: blockCap},
		{name: "read-only block", cap: blockCap, readonly: true},
		{name: "filesystem", cap: fsCap, wantMount: "relatime"},
		{name: "filesystem with mount options", cap: optsCap, wantMount: "noatime", wantSuper: "commit=30"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scsitest.NeedRoot(t)
			f := scsitest.New(t)
			f.AddDisk("sdb", scsitest.Loop(t, lunSize))
			f.AddFCLink(wwn, "0", "sdb")
			s := newServer()
			c := fakeConfig(f)
			s.cfg.Store(&c)
			ctx := context.Background()
			dir := t.TempDir()
			staging, target := filepath.Join(dir, "staging"), filepath.Join(dir, "pod", "dev")
			if err := os.Mkdir(staging, 0o750); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = mount.Unmount(target); _ = mount.Unmount(staging) })
			vctx := map[string]string{keyWWNs: wwn, keyLUN: "0"}
			att, err := s.Attach(ctx, &volumev1.AttachRequest{VolumeId: "v", VolumeContext: vctx})
			must(t, "Attach", err)
			_, err = s.Stage(ctx, &volumev1.StageRequest{VolumeId: "v", StagingPath: staging, PublishContext: att.GetPublishContext(), Capability: tt.cap, VolumeContext: vctx})
			must(t, "Stage", err)
			block := tt.cap.GetBlock() != nil
			if block {
				_, err = s.Publish(ctx, &volumev1.PublishRequest{VolumeId: "v", StagingPath: staging, TargetPath: target, Capability: tt.cap})
				wantCode(t, "Publish of a block volume", err, codes.InvalidArgument)
				for range 2 {
					_, err = s.MapBlock(ctx, &volumev1.MapBlockRequest{VolumeId: "v", StagingPath: staging, TargetPath: target, Readonly: tt.readonly, Capability: tt.cap})
					must(t, "MapBlock", err)
				}
				// The kernel lets a device node on a read-only mount be
				// opened for writing; the runtime's device permissions
				// enforce a read-only block volume, so only reading is
				// checked here.
				if dev, err := os.Open(target); err != nil {
					t.Errorf("opening the mapped device: %v", err)
				} else {
					_ = dev.Close()
				}
			} else {
				_, err = s.MapBlock(ctx, &volumev1.MapBlockRequest{VolumeId: "v", StagingPath: staging, TargetPath: target})
				wantCode(t, "MapBlock of a filesystem volume", err, codes.FailedPrecondition)
				_, err = s.Publish(ctx, &volumev1.PublishRequest{VolumeId: "v", StagingPath: staging, TargetPath: target, Capability: tt.cap})
				must(t, "Publish", err)
				m, super, ok := scsitest.MountOptions(staging)
				if !ok || !slices.Contains(strings.Split(m, ","), tt.wantMount) || tt.wantSuper != "" && !slices.Contains(strings.Split(super, ","), tt.wantSuper) {
					t.Errorf("staging mount options %q, filesystem options %q (mounted %v); want %s and %q", m, super, ok, tt.wantMount, tt.wantSuper)
				}
			}
			m, err := s.GetMetrics(ctx, &volumev1.GetMetricsRequest{VolumeId: "v", VolumePath: target, StagingPath: staging})
			must(t, "GetMetrics", err)
			if block && (m.GetTotalBytes() != lunSize || m.GetUsedBytes() != 0 || m.GetTotalInodes() != 0) {
				t.Errorf("block metrics: got %v; want total_bytes %d only", m, lunSize)
			}
			if !block && (m.GetTotalBytes() <= 0 || m.GetTotalBytes() >= lunSize || m.GetTotalInodes() <= 0 || m.GetUsedBytes()+m.GetAvailableBytes() > m.GetTotalBytes()) {
				t.Errorf("filesystem metrics: got %v; want statfs figures of a %d-byte ext4", m, lunSize)
			}
			restarted := newServer() // Reconstruct runs after a restart: only the records remain
			restarted.cfg.Store(&c)
			r, err := restarted.Reconstruct(ctx, &volumev1.ReconstructRequest{TargetPath: target})
			must(t, "Reconstruct", err)
			if !r.GetFound() || r.GetVolumeId() != "v" || r.GetStagingPath() != staging || (r.GetCapability().GetBlock() != nil) != block || r.GetVolumeContext()[keyLUN] != "0" {
				t.Errorf("Reconstruct: got %v; want volume v staged at %s, block %v", r, staging, block)
			}
			if block {
				for range 2 {
					_, err = s.UnmapBlock(ctx, &volumev1.UnmapBlockRequest{VolumeId: "v", TargetPath: target})
					must(t, "UnmapBlock", err)
				}
			} else {
				_, err = s.Unpublish(ctx, &volumev1.UnpublishRequest{VolumeId: "v", TargetPath: target})
				must(t, "Unpublish", err)
			}
			if _, err := os.Lstat(target); !os.IsNotExist(err) {
				t.Errorf("target after teardown: %v; want it gone", err)
			}
			_, err = s.GetMetrics(ctx, &volumev1.GetMetricsRequest{VolumeId: "v", VolumePath: target})
			wantCode(t, "GetMetrics after teardown", err, codes.NotFound)
			_, err = s.Unstage(ctx, &volumev1.UnstageRequest{VolumeId: "v", StagingPath: staging})
			must(t, "Unstage", err)
			if !f.Deleted("sdb") {
				t.Errorf("sdb not deleted by Unstage")
			}
		})
	}
}

// TestCapabilities: metrics, block volumes included, are declared.
func TestCapabilities(t *testing.T) {
	c, err := newServer().GetCapabilities(context.Background(), &volumev1.GetCapabilitiesRequest{})
	must(t, "GetCapabilities", err)
	if !c.GetSupportsMetrics() || !c.GetBlock() || !c.GetRequiresAttach() || !c.GetStageUnstage() || !c.GetReconstruction() {
		t.Errorf("GetCapabilities: got %v; want attach, stage, block, metrics and reconstruction", c)
	}
}

func must(t *testing.T, call string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", call, err)
	}
}

func wantCode(t *testing.T, call string, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Errorf("%s: got %v (%v); want %v", call, got, err, want)
	}
}
