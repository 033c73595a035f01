package mount

import (
	"errors"
	"fmt"
)

// Usage is the space and inode usage of a filesystem, as GetMetrics
// reports it: used is what is not free, available is what an unprivileged
// writer may still use, so used + available <= total.
type Usage struct {
	TotalBytes, UsedBytes, AvailableBytes    int64
	TotalInodes, UsedInodes, AvailableInodes int64
}

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
// point; a plugin answers GetMetrics with NOT_FOUND for it.
var ErrNotMounted = errors.New("not a mount point")

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
