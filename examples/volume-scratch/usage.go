package main

// usageOf computes Usage from statfs(2) counts. Block counts are in units of
// the fragment size frsize; bsize is used when frsize is 0. Used space is
// what is not free; available is what an unprivileged writer may still use.
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
