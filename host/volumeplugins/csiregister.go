package volumeplugins

import (
	"context"
	"fmt"
	"slices"

	"github.com/podhost/podhost/pluginapi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// CSIDriverInfo is what a CSI driver said of this node when it
// registered (its NodeGetInfo).
type CSIDriverInfo struct {
	// NodeID is the driver's ID of this node.
	NodeID string
	// MaxVolumes is how many of its volumes may be published here; 0 is
	// no limit.
	MaxVolumes int64
	// Topology is the topology segments of this node, key → value.
	Topology map[string]string
}

// registrationPlugin is the volume plugin that takes the CSI drivers
// registered at run time: the one that declares volume.csi.registration
// in GetInfo.
func (c *csiVolumes) registrationPlugin() (string, error) {
	var found []string
	for _, name := range c.plugins {
		if caps, err := c.caps(name); err == nil && slices.Contains(caps, pluginapi.CapVolumeCSIRegistration) {
			found = append(found, name)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: no plugin declares %s", ErrNoVolumePlugin, pluginapi.CapVolumeCSIRegistration)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%w: plugins %q and %q both declare %s", ErrVolumePluginConflict, found[0], found[1], pluginapi.CapVolumeCSIRegistration)
}

// route is the plugin serving a CSI driver: the one whose config lists
// it, else the one that takes registered drivers (which answers that it
// does not know a driver until the driver registers).
func (c *csiVolumes) route(driver string) (string, bool) {
	if name, ok := c.routes[driver]; ok {
		return name, true
	}
	name, err := c.registrationPlugin()
	return name, err == nil
}

// RegisterCSIDriver hands a CSI driver that registered at run time to the
// volume plugin that takes them, which connects to endpoint and answers
// with the driver's NodeGetInfo. A driver a plugin's config lists is
// refused: it is served already.
func (p *Plugins) RegisterCSIDriver(ctx context.Context, name, endpoint string) (CSIDriverInfo, error) {
	if plugin, ok := p.csi.routes[name]; ok {
		return CSIDriverInfo{}, fmt.Errorf("name: csi driver %q is listed in plugin %s's config.drivers", name, plugin)
	}
	plugin, cl, err := p.csi.registrationClient()
	if err != nil {
		return CSIDriverInfo{}, err
	}
	resp, err := cl.RegisterDriver(ctx, &volumev1.RegisterDriverRequest{Name: name, Endpoint: endpoint})
	if err != nil {
		return CSIDriverInfo{}, fmt.Errorf("plugin %s: RegisterDriver: %w", plugin, err)
	}
	return CSIDriverInfo{NodeID: resp.GetNodeId(), MaxVolumes: resp.GetMaxVolumesPerNode(), Topology: resp.GetAccessibleTopology()}, nil
}

// DeregisterCSIDriver tells the plugin that takes registered drivers that
// name is gone.
func (p *Plugins) DeregisterCSIDriver(ctx context.Context, name string) error {
	plugin, cl, err := p.csi.registrationClient()
	if err != nil {
		return err
	}
	if _, err := cl.DeregisterDriver(ctx, &volumev1.DeregisterDriverRequest{Name: name}); err != nil {
		return fmt.Errorf("plugin %s: DeregisterDriver: %w", plugin, err)
	}
	return nil
}

// CSIRegistrationPlugin is the name of the volume plugin that takes the
// CSI drivers registered at run time, or an error when there is none or
// more than one.
func (p *Plugins) CSIRegistrationPlugin() (string, error) { return p.csi.registrationPlugin() }

func (c *csiVolumes) registrationClient() (string, volumev1.VolumeClient, error) {
	name, err := c.registrationPlugin()
	if err != nil {
		return "", nil, err
	}
	cl, err := c.clients.Volume(name)
	if err != nil {
		return "", nil, fmt.Errorf("%w: plugin %s: %w", ErrNoVolumePlugin, name, err)
	}
	return name, cl, nil
}
