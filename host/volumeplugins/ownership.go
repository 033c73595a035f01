package volumeplugins

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/ownership"
)

// giveToFSGroup gives an FC or iSCSI filesystem volume, published at
// target, to the pod's fsGroup as the kubelet's FC and iSCSI plugins do
// after their SetUp: when the pod has an fsGroup and the volume is
// writable, with the pod's fsGroupChangePolicy. A walk that failed only
// on some entries is success, as under the kubelet, which ignores the
// walk's errors; one that could not read the volume fails the publish.
func giveToFSGroup(target string, pv volumemanager.PodVolume) error {
	g := pv.Args.FSGroup
	if g == nil || pv.Volume.ReadOnly {
		return nil
	}
	o := ownership.Options{FSGroup: *g}
	if p := pv.Args.FSGroupChangePolicy; p != nil {
		o.Policy = *p
	}
	if err := ownership.Change(target, o); err != nil && !errors.Is(err, ownership.ErrIncomplete) {
		return fmt.Errorf("giving volume %q to fsGroup %d: %w", pv.Name, *g, err)
	}
	return nil
}

// giveToFSGroup gives a published CSI filesystem volume to the pod's
// fsGroup where the kubelet does: by the driver's fsGroupPolicy.
func (c *csiVolumes) giveToFSGroup(ctx context.Context, target string, pv volumemanager.PodVolume) error {
	if pv.Args.FSGroup == nil || pv.Volume.ReadOnly {
		return nil
	}
	policy := storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy
	if c.policy != nil {
		p, err := c.policy(ctx, pv.Volume.CSI.Driver)
		if err != nil {
			return fmt.Errorf("the fsGroupPolicy of CSI driver %s: %w", pv.Volume.CSI.Driver, err)
		}
		if p != "" {
			policy = p
		}
	}
	if !csiOwnershipApplies(pv.Volume, policy) {
		return nil
	}
	return giveToFSGroup(target, pv)
}

// csiOwnershipApplies reports whether the kubelet gives a writable CSI
// volume to a pod's fsGroup under the driver's policy: never with None,
// always with File, and with ReadWriteOnceWithFSType when the volume has
// an fsType and is an inline volume or a PersistentVolume whose access
// modes include ReadWriteOnce or ReadWriteOncePod.
func csiOwnershipApplies(v volumemanager.Volume, policy storagev1.FSGroupPolicy) bool {
	switch policy {
	case storagev1.NoneFSGroupPolicy:
		return false
	case storagev1.FileFSGroupPolicy:
		return true
	}
	if v.CSI.FSType == "" {
		return false
	}
	if v.PV == "" {
		return true // an inline volume is published single-node-writer
	}
	return slices.ContainsFunc(v.AccessModes, func(m v1.PersistentVolumeAccessMode) bool {
		return m == v1.ReadWriteOnce || m == v1.ReadWriteOncePod
	})
}
