package mount

import (
	"fmt"
	"syscall"
)

// FilesystemUsage reads the usage of the filesystem holding path.
func FilesystemUsage(path string) (Usage, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return Usage{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	return usageOf(st.Blocks, st.Bfree, st.Bavail, st.Files, st.Ffree, int64(st.Frsize), int64(st.Bsize)), nil
}
