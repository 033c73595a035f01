package mount

import (
	"fmt"

	"github.com/podhost/podhost/sdk"
)

// Usage is the space and inode usage of a filesystem, as GetMetrics
// reports it: used is what is not free, available is what an unprivileged
// writer may still use, so used + available <= total. It is the SDK's
// VolumeUsage, so that a VolumeMetrics returns MountUsage's answer as it is.
type Usage = sdk.VolumeUsage

// usageOf computes Usage from statfs(2) counts. Block counts are in units of
// the fragment size frsize; bsize is used when frsize is 0. Inconsistent
// counts are clamped so that the sums hold.
func usageOf(blocks, bfree, bavail, files, ffree uint64, frsize, bsize int64) Usage {
	unit := frsize
	if unit <= 0 {
		unit = bsize
	}
	bfree, bavail, ffree = min(bfree, blocks), min(bavail, bfree, blocks), min(ffree, files)
	return Usage{
		TotalBytes:      int64(blocks) * unit,
		UsedBytes:       int64(blocks-bfree) * unit,
		AvailableBytes:  int64(bavail) * unit,
		TotalInodes:     int64(files),
		UsedInodes:      int64(files - ffree),
		AvailableInodes: int64(ffree),
	}
}

// ErrNotMounted is the error of MountUsage for a path that is not a mount
// point; a plugin answers GetMetrics with NOT_FOUND for it. It wraps
// sdk.ErrNotFound, which the SDK answers so.
var ErrNotMounted error = notMounted{}

type notMounted struct{}

func (notMounted) Error() string { return "not a mount point" }
func (notMounted) Unwrap() error { return sdk.ErrNotFound }

// MountUsage reads the usage of the filesystem mounted on path, the
// volume_path of GetMetrics. A path that is not a mount point, or does not
// exist, is ErrNotMounted.
func MountUsage(path string) (Usage, error) {
	switch mounted, err := IsMounted(path); {
	case err != nil:
		return Usage{}, err
	case !mounted:
		return Usage{}, fmt.Errorf("%s: %w", path, ErrNotMounted)
	}
	return FilesystemUsage(path)
}
