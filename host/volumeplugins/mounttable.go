package volumeplugins

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/apivolumes"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
)

// InPlace is the volume manager's MountTable: a plugin's volume (CSI, FC,
// iSCSI) is in place when its target path, or the device file of a raw
// block volume, is a mount point, since every publish and map of the
// contract mounts there; a tmpfs emptyDir when its directory is. The
// other volumes of the host's own live on its disk and are always in
// place (their publish writes them again anyway).
func (p *Plugins) InPlace(_ context.Context, pv volumemanager.PodVolume) (bool, error) {
	v := pv.Volume
	switch {
	case v.Plugin == volumemanager.PluginEmptyDir:
		if v.EmptyDir == nil || v.EmptyDir.Medium != v1.StorageMediumMemory {
			return true, nil
		}
		path, _ := p.host.Path(pv)
		return p.host.Mounted(path)
	case hostvolumes.Serves(v.Plugin), apivolumes.Serves(v.Plugin), v.Unresolved:
		return true, nil
	}
	return p.host.Mounted(p.host.VolumePath(pv))
}

var _ volumemanager.MountTable = (*Plugins)(nil)
