package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/podhost/podhost/plugins/internal/scsitest"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk/mount"
)

// TestBlock stages a raw block iSCSI volume (login, no filesystem), maps
// it, reads its capacity (BLKGETSIZE64 of the loop device behind the
// LUN), and unmaps and unstages it (logout).
func TestBlock(t *testing.T) {
	scsitest.NeedRoot(t)
	f := scsitest.New(t)
	const size = 32 << 20
	f.AddTarget(scsitest.Target{Portal: portal, IQN: iqn, LUNs: map[string]string{"0": scsitest.Loop(t, size)}})
	s, _ := iscsiServer(t, f)
	ctx := context.Background()
	dir := t.TempDir()
	staging, target := filepath.Join(dir, "staging"), filepath.Join(dir, "pod", "dev")
	t.Cleanup(func() { _ = mount.Unmount(target) })
	block := &volumev1.Capability{AccessType: &volumev1.Capability_Block{Block: &volumev1.Capability_BlockVolume{}}}
	caps, err := s.GetCapabilities(ctx, &volumev1.GetCapabilitiesRequest{})
	if err != nil || caps.GetRequiresAttach() || !caps.GetBlock() || !caps.GetSupportsMetrics() {
		t.Fatalf("GetCapabilities: got %v, %v; want block and metrics, no attach (Stage logs in)", caps, err)
	}
	if _, err := s.Stage(ctx, &volumev1.StageRequest{VolumeId: "v", StagingPath: staging, Capability: block, VolumeContext: vc("0")}); err != nil {
		t.Fatalf("Stage: %v", err)
	}
	if mounted, _ := mount.IsMounted(staging); mounted {
		t.Errorf("a block volume's staging path is mounted; want only the record")
	}
	if _, err := s.MapBlock(ctx, &volumev1.MapBlockRequest{VolumeId: "v", StagingPath: staging, TargetPath: target, Capability: block}); err != nil {
		t.Fatalf("MapBlock: %v", err)
	}
	m, err := s.GetMetrics(ctx, &volumev1.GetMetricsRequest{VolumeId: "v", VolumePath: target})
	if err != nil || m.GetTotalBytes() != size {
		t.Errorf("GetMetrics: got %v, %v; want total_bytes %d", m, err, size)
	}
	if _, err := s.UnmapBlock(ctx, &volumev1.UnmapBlockRequest{VolumeId: "v", TargetPath: target}); err != nil {
		t.Fatalf("UnmapBlock: %v", err)
	}
	if _, err := s.Unstage(ctx, &volumev1.UnstageRequest{VolumeId: "v", StagingPath: staging}); err != nil {
		t.Fatalf("Unstage: %v", err)
	}
	if f.LoggedIn(portal, iqn) {
		t.Errorf("still logged in after Unstage")
	}
}
