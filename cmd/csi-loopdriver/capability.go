package main

import (
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
)

// volumeCap is a CSI volume capability as the driver uses it.
type volumeCap struct {
	block  bool
	fsType string // "" for ext4
	flags  []string
	mode   csi.VolumeCapability_AccessMode_Mode
}

// fsTypes are the filesystems the driver makes; "" means ext4.
var fsTypes = map[string]bool{"": true, "ext2": true, "ext3": true, "ext4": true, "xfs": true}

// parseCap checks a capability; field names the request field for errors.
func parseCap(field string, c *csi.VolumeCapability) (volumeCap, error) {
	if c == nil {
		return volumeCap{}, fmt.Errorf("%s: required: %w", field, errInvalid)
	}
	mode := c.GetAccessMode().GetMode()
	if _, known := csi.VolumeCapability_AccessMode_Mode_name[int32(mode)]; !known || mode == csi.VolumeCapability_AccessMode_UNKNOWN {
		return volumeCap{}, fmt.Errorf("%s.access_mode: required: %w", field, errInvalid)
	}
	vc := volumeCap{mode: mode}
	switch t := c.GetAccessType().(type) {
	case *csi.VolumeCapability_Block:
		vc.block = true
	case *csi.VolumeCapability_Mount:
		vc.fsType, vc.flags = t.Mount.GetFsType(), t.Mount.GetMountFlags()
		if !fsTypes[vc.fsType] {
			return volumeCap{}, fmt.Errorf("%s.mount.fs_type: %q is not ext2, ext3, ext4 or xfs: %w", field, vc.fsType, errInvalid)
		}
		if t.Mount.GetVolumeMountGroup() != "" {
			return volumeCap{}, fmt.Errorf("%s.mount.volume_mount_group: not supported: %w", field, errInvalid)
		}
	default:
		return volumeCap{}, fmt.Errorf("%s.access_type: required (block or mount): %w", field, errInvalid)
	}
	return vc, nil
}

// readOnly says whether the access mode allows no writer.
func (c volumeCap) readOnly() bool {
	return c.mode == csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY ||
		c.mode == csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY
}

// singleWriter says whether the volume may be published at one target only.
func (c volumeCap) singleWriter() bool {
	return c.mode == csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER
}
