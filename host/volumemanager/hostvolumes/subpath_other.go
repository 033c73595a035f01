//go:build !linux

package hostvolumes

// bindSubPath fails: a sub path is only mounted safely (openat and a bind
// mount of the descriptor) on Linux.
func (h *Host) bindSubPath(_, _, _ string) error { return errNoMounts }
