package volumeplugins

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/volumemanager"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// Reconstruct rebuilds a CSI pod volume directory: it asks the plugin
// serving the driver that the directory's data (vol_data.json) names, or
// without data every CSI plugin, what it published at the target; what no
// plugin knows is rebuilt from the data alone, as the kubelet does, so
// that it is unpublished and unstaged through its driver. The volume is
// published when its target is a mount point, staged when it is
// published, and uncertain otherwise. Without data or answer, a target
// that is no mount point is volumemanager.ErrNotMounted (a publish that
// failed left its directory), a mount point an error.
func (c *csiVolumes) Reconstruct(ctx context.Context, dir volumemanager.PodVolumeDir) (volumemanager.Reconstructed, error) {
	var none volumemanager.Reconstructed
	pv := volumemanager.PodVolume{Pod: dir.Pod, Name: dir.Name, Volume: volumemanager.Volume{Plugin: dir.Plugin, Block: dir.Block}}
	target := c.host.VolumePath(pv)
	data, hasData, dataErr := readCSIData(c.root, dir)
	resp, askErr := c.ask(ctx, data.Driver, target)
	var v volumemanager.Volume
	switch {
	case resp.GetFound():
		var err error
		if v, err = c.volumeOf(dir, resp, data, hasData); err != nil {
			return none, err
		}
	case hasData:
		v = csiVolumeFrom(dir, data.Driver, data.VolumeHandle, data.LifecycleMode == modePersistent, data.PV, data.ReadOnly, "", nil)
	case dataErr != nil:
		return none, errors.Join(dataErr, askErr)
	case askErr != nil:
		return none, askErr
	}
	mounted, err := c.host.Mounted(target)
	if err != nil {
		return none, fmt.Errorf("csi volume at %s: %w", target, err)
	}
	if v.CSI == nil {
		if mounted {
			return none, fmt.Errorf("no csi volume plugin knows the volume mounted at %s", target)
		}
		return none, fmt.Errorf("csi volume at %s: %w", target, volumemanager.ErrNotMounted)
	}
	return volumemanager.Reconstructed{Volume: v, Published: mounted, Staged: mounted && v.Shared}, nil
}

// ask asks the plugin serving driver, or with no driver every CSI
// plugin, about target; the first that found it answers.
func (c *csiVolumes) ask(ctx context.Context, driver, target string) (*volumev1.ReconstructResponse, error) {
	byPlugin := invert(c.routes)
	if name, err := c.registrationPlugin(); err == nil {
		byPlugin[name] = ""
	}
	plugins := slices.Sorted(maps.Keys(byPlugin))
	if driver != "" {
		name, ok := c.route(driver)
		if !ok {
			return nil, fmt.Errorf("%w: csi driver %q", ErrNoVolumePlugin, driver)
		}
		plugins = []string{name}
	}
	var errs []error
	for _, name := range plugins {
		cl, err := c.clients.Volume(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: plugin %s: %w", ErrNoVolumePlugin, name, err))
			continue
		}
		caps, err := cl.GetCapabilities(ctx, &volumev1.GetCapabilitiesRequest{})
		if err != nil {
			errs = append(errs, transientError(name, "GetCapabilities", err))
			continue
		}
		if !caps.GetReconstruction() {
			continue
		}
		resp, err := cl.Reconstruct(ctx, &volumev1.ReconstructRequest{TargetPath: target})
		if err != nil {
			errs = append(errs, edgeError(name, "Reconstruct", err))
			continue
		}
		if resp.GetFound() {
			return resp, nil
		}
	}
	return nil, errors.Join(errs...)
}

// volumeOf is the volume a plugin's record describes, which must agree
// with the directory's data and with the staging path the host gives it.
func (c *csiVolumes) volumeOf(dir volumemanager.PodVolumeDir, resp *volumev1.ReconstructResponse, data csiData, hasData bool) (volumemanager.Volume, error) {
	if hasData && (data.Driver != resp.GetDriver() || data.VolumeHandle != resp.GetVolumeId()) {
		return volumemanager.Volume{}, fmt.Errorf("the plugin's record of %s (driver %q, volume %q) disagrees with %s (driver %q, volume %q)",
			dir.Name, resp.GetDriver(), resp.GetVolumeId(), csiDataFile, data.Driver, data.VolumeHandle)
	}
	capability := resp.GetCapability()
	readOnly := capability.GetAccessMode() == volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_READER_ONLY
	v := csiVolumeFrom(dir, resp.GetDriver(), resp.GetVolumeId(), resp.GetStagingPath() != "", data.PV, readOnly,
		capability.GetMount().GetFsType(), resp.GetVolumeContext())
	if staging := c.stagingPath(v); staging != resp.GetStagingPath() {
		return volumemanager.Volume{}, fmt.Errorf("csi volume %s: staging path %q of the plugin's record disagrees with the host's %q", v.ID, resp.GetStagingPath(), staging)
	}
	return v, nil
}

// csiVolumeFrom is a rebuilt CSI volume, named as the desired state names
// it: <driver>^<handle> when shared, <pod>-<name> when inline.
func csiVolumeFrom(dir volumemanager.PodVolumeDir, driver, handle string, shared bool, pv string, readOnly bool, fsType string, attrs map[string]string) volumemanager.Volume {
	id := volumemanager.VolumeID(volumemanager.PluginCSI + "/" + string(dir.Pod) + "-" + dir.Name)
	if shared {
		id = volumemanager.VolumeID(volumemanager.PluginCSI + "/" + driver + "^" + handle)
	}
	return volumemanager.Volume{
		ID: id, Plugin: volumemanager.PluginCSI, Shared: shared, Block: dir.Block, ReadOnly: readOnly, PV: pv,
		CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle, ReadOnly: readOnly, FSType: fsType, VolumeAttributes: attrs},
	}
}

// invert maps each plugin of routes to one of its drivers.
func invert(routes map[string]string) map[string]string {
	out := map[string]string{}
	for driver, plugin := range routes {
		out[plugin] = driver
	}
	return out
}
