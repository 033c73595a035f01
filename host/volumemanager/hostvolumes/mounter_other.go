//go:build !linux

package hostvolumes

import "errors"

// errNoMounts: mounting is only implemented on Linux.
var errNoMounts = errors.New("mounts are only supported on linux")

// SystemMounter is the Mounter of this machine; off Linux it mounts
// nothing and knows no mount points.
type SystemMounter struct{}

// MountTmpfs fails: no tmpfs off Linux.
func (SystemMounter) MountTmpfs(string, int64) error { return errNoMounts }

// BindFD fails: no bind mounts off Linux.
func (SystemMounter) BindFD(int, string) error { return errNoMounts }

// Unmount has nothing to undo.
func (SystemMounter) Unmount(string) error { return nil }

// IsMountPoint reports false.
func (SystemMounter) IsMountPoint(string) (bool, error) { return false, nil }

// MakeRShared has nothing to do: no mount propagation off Linux.
func MakeRShared(string) error { return nil }
