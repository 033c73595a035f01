package main

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/protobuf/proto"

	"github.com/podhost/podhost/sdk"
)

// volume is one volume as a Stage, Publish or MapBlock call describes it.
type volume struct {
	Driver         string
	ID             string
	PublishContext map[string]string
	Context        map[string]string
	Secrets        map[string]string
	SecretsDir     string
	// Capability is the CSI capability the contract's maps to, before it is
	// fitted to the driver's capabilities.
	Capability *csi.VolumeCapability
	Readonly   bool
	// RecordCapability is the contract's capability, kept for Reconstruct.
	RecordCapability []byte
}

// usage is what NodeGetVolumeStats reports.
type usage struct {
	AvailableBytes, TotalBytes, UsedBytes    int64
	AvailableInodes, TotalInodes, UsedInodes int64
}

func required(fields ...string) error {
	for i := 0; i < len(fields); i += 2 {
		if fields[i+1] == "" {
			return fmt.Errorf("%w: %s is required", errInvalid, fields[i])
		}
	}
	return nil
}

// fit adapts c to what the driver can do: a single-writer mode the driver
// does not know becomes SINGLE_NODE_WRITER, and the mount group is passed
// only to a driver with VOLUME_MOUNT_GROUP.
func fit(c *csi.VolumeCapability, f *driverFacts) *csi.VolumeCapability {
	c = proto.Clone(c).(*csi.VolumeCapability)
	if !f.has(csi.NodeServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER) {
		switch c.GetAccessMode().GetMode() {
		case csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER, csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER:
			c.AccessMode = &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}
		}
	}
	if m := c.GetMount(); m != nil && !f.has(csi.NodeServiceCapability_RPC_VOLUME_MOUNT_GROUP) {
		m.VolumeMountGroup = ""
	}
	return c
}

// driverWithFacts returns the connection to the driver a volume names and
// what the driver says it can do; a failure to ask is errNotAttempted.
func (p *csiPlugin) driverWithFacts(ctx context.Context, name string) (*driverConn, *driverFacts, error) {
	dc, err := p.driverFor(name)
	if err != nil {
		return nil, nil, err
	}
	f, err := dc.getFacts(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errNotAttempted, err)
	}
	return dc, f, nil
}

// stage calls NodeStageVolume, only for a driver with STAGE_UNSTAGE_VOLUME;
// for any other driver it succeeds without a call.
func (p *csiPlugin) stage(ctx context.Context, v volume, stagingPath string) error {
	if err := required("volume_id", v.ID, "staging_path", stagingPath); err != nil {
		return err
	}
	dc, f, err := p.driverWithFacts(ctx, v.Driver)
	if err != nil {
		return err
	}
	if !f.has(csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME) {
		return nil
	}
	secrets, err := nodeSecrets(v.Secrets, v.SecretsDir)
	if err != nil {
		return fmt.Errorf("%w: %w", errNotAttempted, err)
	}
	return dc.call(ctx, "NodeStageVolume", func(ctx context.Context) error {
		_, err := dc.node.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{
			VolumeId: v.ID, PublishContext: v.PublishContext, StagingTargetPath: stagingPath,
			VolumeCapability: fit(v.Capability, f), Secrets: secrets, VolumeContext: v.Context,
		})
		return err
	})
}

// unstage calls NodeUnstageVolume, whether or not stagingPath exists, only
// for a driver with STAGE_UNSTAGE_VOLUME.
func (p *csiPlugin) unstage(ctx context.Context, driverName, volumeID, stagingPath string) error {
	if err := required("volume_id", volumeID, "staging_path", stagingPath); err != nil {
		return err
	}
	dc, f, err := p.driverWithFacts(ctx, driverName)
	if err != nil {
		return err
	}
	if !f.has(csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME) {
		return nil
	}
	return dc.call(ctx, "NodeUnstageVolume", func(ctx context.Context) error {
		_, err := dc.node.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: volumeID, StagingTargetPath: stagingPath})
		return err
	})
}

// ephemeralKey is the volume context key that marks an inline ephemeral
// volume (the kubelet's), which is published without staging.
const ephemeralKey = "csi.storage.k8s.io/ephemeral"

// publish calls NodePublishVolume, with the staging path only for a driver
// that stages and a volume that is not inline ephemeral. The record for Reconstruct is written before the call and
// removed again when the call failed finally.
func (p *csiPlugin) publish(ctx context.Context, v volume, stagingPath, targetPath string) error {
	if err := required("volume_id", v.ID, "target_path", targetPath); err != nil {
		return err
	}
	dc, f, err := p.driverWithFacts(ctx, v.Driver)
	if err != nil {
		return err
	}
	switch {
	case !f.has(csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME):
		stagingPath = ""
	case stagingPath == "" && v.Context[ephemeralKey] == "true":
		// An inline ephemeral volume is never staged, as with a kubelet.
	case stagingPath == "":
		return fmt.Errorf("%w: staging_path is required: csi driver %q stages volumes (and volume_context has no %s: \"true\")", errInvalid, dc.cfg.Name, ephemeralKey)
	}
	secrets, err := nodeSecrets(v.Secrets, v.SecretsDir)
	if err != nil {
		return fmt.Errorf("%w: %w", errNotAttempted, err)
	}
	dir, err := p.stateDir()
	if err != nil {
		return err
	}
	rec := record{TargetPath: targetPath, Driver: dc.cfg.Name, VolumeID: v.ID, StagingPath: stagingPath, Context: v.Context, Capability: v.RecordCapability}
	if err := saveRecord(dir, rec); err != nil {
		return err
	}
	err = dc.call(ctx, "NodePublishVolume", func(ctx context.Context) error {
		_, err := dc.node.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{
			VolumeId: v.ID, PublishContext: v.PublishContext, StagingTargetPath: stagingPath, TargetPath: targetPath,
			VolumeCapability: fit(v.Capability, f), Readonly: v.Readonly, Secrets: secrets, VolumeContext: v.Context,
		})
		return err
	})
	if err != nil && sdk.ClassifyVolumeError(toStatus(err)) == sdk.VolumeFinal {
		if rmErr := removeRecord(dir, targetPath); rmErr != nil {
			return fmt.Errorf("%w (and %w)", err, rmErr)
		}
	}
	return err
}

// unpublish calls NodeUnpublishVolume, whether or not targetPath exists,
// and forgets the record once it succeeded.
func (p *csiPlugin) unpublish(ctx context.Context, driverName, volumeID, targetPath string) error {
	if err := required("volume_id", volumeID, "target_path", targetPath); err != nil {
		return err
	}
	dc, err := p.driverFor(driverName)
	if err != nil {
		return err
	}
	dir, err := p.stateDir()
	if err != nil {
		return err
	}
	if err := dc.call(ctx, "NodeUnpublishVolume", func(ctx context.Context) error {
		_, err := dc.node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: volumeID, TargetPath: targetPath})
		return err
	}); err != nil {
		return err
	}
	return removeRecord(dir, targetPath)
}

// metrics calls NodeGetVolumeStats, only for a driver with
// GET_VOLUME_STATS; for any other driver it is errNoMetrics without a call.
func (p *csiPlugin) metrics(ctx context.Context, driverName, volumeID, volumePath, stagingPath string) (usage, error) {
	if err := required("volume_id", volumeID, "volume_path", volumePath); err != nil {
		return usage{}, err
	}
	dc, f, err := p.driverWithFacts(ctx, driverName)
	if err != nil {
		return usage{}, err
	}
	if !f.has(csi.NodeServiceCapability_RPC_GET_VOLUME_STATS) {
		return usage{}, fmt.Errorf("csi driver %q: %w", dc.cfg.Name, errNoMetrics)
	}
	if !f.has(csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME) {
		stagingPath = ""
	}
	resp, err := ask(ctx, dc, "NodeGetVolumeStats", func(ctx context.Context) (*csi.NodeGetVolumeStatsResponse, error) {
		return dc.node.NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: volumeID, VolumePath: volumePath, StagingTargetPath: stagingPath})
	})
	if err != nil {
		return usage{}, err
	}
	return readUsage(dc.cfg.Name, resp)
}

// readUsage takes the byte and inode usage from a stats answer; entries of
// other units are ignored, an answer with neither, or with a negative
// number, is errBadAnswer.
func readUsage(name string, resp *csi.NodeGetVolumeStatsResponse) (usage, error) {
	var u usage
	var known bool
	for _, e := range resp.GetUsage() {
		if e.GetAvailable() < 0 || e.GetTotal() < 0 || e.GetUsed() < 0 {
			return usage{}, fmt.Errorf("csi driver %q: NodeGetVolumeStats: negative usage %v: %w", name, e, errBadAnswer)
		}
		switch e.GetUnit() {
		case csi.VolumeUsage_BYTES:
			u.AvailableBytes, u.TotalBytes, u.UsedBytes, known = e.GetAvailable(), e.GetTotal(), e.GetUsed(), true
		case csi.VolumeUsage_INODES:
			u.AvailableInodes, u.TotalInodes, u.UsedInodes, known = e.GetAvailable(), e.GetTotal(), e.GetUsed(), true
		}
	}
	if !known {
		return usage{}, fmt.Errorf("csi driver %q: NodeGetVolumeStats: no byte or inode usage: %w", name, errBadAnswer)
	}
	return u, nil
}

// reconstruct returns the record of what the plugin published at
// targetPath; false when it published nothing there (or unpublished it).
func (p *csiPlugin) reconstruct(targetPath string) (record, bool, error) {
	if err := required("target_path", targetPath); err != nil {
		return record{}, false, err
	}
	dir, err := p.stateDir()
	if err != nil {
		return record{}, false, err
	}
	return loadRecord(dir, targetPath)
}
