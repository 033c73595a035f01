package volumeplugins

import (
	"context"
	"fmt"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/pluginapi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// Plugins is the stats gatherer's MetricsPlugins over the volume
// plugins serving CSI drivers and FC and iSCSI volumes. A plugin declares
// metrics twice, and both must say so: volume.metrics in GetInfo and
// supports_metrics in GetCapabilities; it is never asked otherwise. The
// host's own volumes have none.

// metricsRequest is the plugin serving pv and the request about it; a nil
// request for a volume no plugin serves metrics of.
func (c *Plugins) metricsRequest(pv volumemanager.PodVolume) (string, volumev1.VolumeClient, *volumev1.GetMetricsRequest, error) {
	v := pv.Volume
	switch v.Plugin {
	case volumemanager.PluginCSI:
		if c.csi == nil {
			return "", nil, nil, noPlugin(v)
		}
		name, cl, err := c.csi.client(v)
		if err != nil {
			return "", nil, nil, err
		}
		return name, cl, &volumev1.GetMetricsRequest{
			VolumeId: v.CSI.VolumeHandle, VolumePath: c.csi.host.VolumePath(pv), StagingPath: c.csi.stagingPath(v), Driver: v.CSI.Driver,
		}, nil
	case volumemanager.PluginFC, volumemanager.PluginISCSI:
		if c.scsi == nil {
			return "", nil, nil, noPlugin(v)
		}
		name, err := c.scsi.route(v.Plugin)
		if err != nil {
			return "", nil, nil, err
		}
		cl, err := c.scsi.clients.Volume(name)
		if err != nil {
			return "", nil, nil, fmt.Errorf("%w: plugin %s: %w", ErrNoVolumePlugin, name, err)
		}
		staging, err := c.scsi.stagingPath(v)
		if err != nil {
			return "", nil, nil, err
		}
		return name, cl, &volumev1.GetMetricsRequest{VolumeId: string(v.ID), VolumePath: c.scsi.host.VolumePath(pv), StagingPath: staging}, nil
	}
	return "", nil, nil, nil
}

func (c *Plugins) SupportsMetrics(ctx context.Context, v volumemanager.Volume) (bool, error) {
	name, cl, req, err := c.metricsRequest(volumemanager.PodVolume{Volume: v})
	if err != nil || req == nil {
		return false, err
	}
	declared, err := c.caps(name)
	if err != nil {
		return false, fmt.Errorf("plugin %s: %w", name, err)
	}
	if !slices.Contains(declared, pluginapi.CapVolumeMetrics) {
		return false, nil
	}
	resp, err := cl.GetCapabilities(ctx, &volumev1.GetCapabilitiesRequest{})
	if err != nil {
		return false, fmt.Errorf("plugin %s: GetCapabilities: %w", name, err)
	}
	return resp.GetSupportsMetrics(), nil
}

func (c *Plugins) GetMetrics(ctx context.Context, pv volumemanager.PodVolume) (volumemanager.VolumeUsage, error) {
	name, cl, req, err := c.metricsRequest(pv)
	if err != nil {
		return volumemanager.VolumeUsage{}, err
	}
	if req == nil {
		return volumemanager.VolumeUsage{}, fmt.Errorf("%w: plugin %s", volumemanager.ErrMetricsNotSupported, pv.Volume.Plugin)
	}
	resp, err := cl.GetMetrics(ctx, req)
	switch {
	case status.Code(err) == codes.Unimplemented:
		return volumemanager.VolumeUsage{}, fmt.Errorf("plugin %s: %w: %w", name, volumemanager.ErrMetricsNotSupported, err)
	case err != nil:
		return volumemanager.VolumeUsage{}, fmt.Errorf("plugin %s: GetMetrics: %w", name, err)
	}
	return volumemanager.VolumeUsage{
		CapacityBytes: resp.GetTotalBytes(), AvailableBytes: resp.GetAvailableBytes(), UsedBytes: resp.GetUsedBytes(),
		Inodes: resp.GetTotalInodes(), InodesFree: resp.GetAvailableInodes(), InodesUsed: resp.GetUsedInodes(),
	}, nil
}
