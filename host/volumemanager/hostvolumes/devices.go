package hostvolumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// DevicePath is the file the raw block volume of pv is mapped on
// (PodDevicePath).
func (h *Host) DevicePath(pv volumemanager.PodVolume) string {
	return PodDevicePath(h.root, pv.Pod, pv.Volume.Plugin, pv.Name)
}

// VolumePath is where pv is for its pod: its map file for a raw block
// volume, its target path otherwise.
func (h *Host) VolumePath(pv volumemanager.PodVolume) string {
	if pv.Volume.Block {
		return h.DevicePath(pv)
	}
	return h.TargetPath(pv)
}

// RemovePodDevice removes the map file of a raw block volume once the
// plugin has unmapped it, and the pod directories it leaves empty. A
// missing file is success.
func RemovePodDevice(root string, uid types.UID, plugin, name string) error {
	path := PodDevicePath(root, uid, plugin, name)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the pod's device file: %w", err)
	}
	removeEmptyParents(root, uid, path)
	return nil
}

// ContainerDevices are the runtime devices of container c of pod: one per
// volumeDevice, at its devicePath, from the map file of the raw block
// volume that desired returns for its name. A device naming no volume of
// the pod, one not desired, or one that is not a block volume is an error
// naming the field.
func (h *Host) ContainerDevices(pod *v1.Pod, c *v1.Container, desired func(name string) (volumemanager.PodVolume, bool)) ([]*runtimev1.Device, error) {
	out := make([]*runtimev1.Device, 0, len(c.VolumeDevices))
	for i, vd := range c.VolumeDevices {
		field := fmt.Sprintf("container %q volumeDevices[%d]", c.Name, i)
		if !slices.ContainsFunc(pod.Spec.Volumes, func(v v1.Volume) bool { return v.Name == vd.Name }) {
			return nil, &volumemanager.FieldError{Field: field + ".name", Detail: fmt.Sprintf("no volume %q in spec.volumes", vd.Name)}
		}
		if vd.DevicePath == "" {
			return nil, &volumemanager.FieldError{Field: field + ".devicePath", Detail: "required"}
		}
		pv, ok := desired(vd.Name)
		if !ok {
			return nil, &volumemanager.FieldError{Field: field + ".name", Detail: fmt.Sprintf("volume %q is not mapped", vd.Name)}
		}
		if !pv.Volume.Block {
			return nil, &volumemanager.FieldError{Field: field + ".name", Detail: fmt.Sprintf("volume %q is not a block volume (volumeMode: Block); mount it with volumeMounts", vd.Name)}
		}
		perms := "rwm"
		if pv.Volume.ReadOnly {
			perms = "rm"
		}
		out = append(out, &runtimev1.Device{ContainerPath: vd.DevicePath, HostPath: h.DevicePath(pv), Permissions: perms})
	}
	return out, nil
}
