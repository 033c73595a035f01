package volumetest

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	mountutils "k8s.io/mount-utils"
)

// mountsUnder returns the mount points at dir or below it, the latest
// first, so that unmounting them in order takes stacked mounts off from
// the top.
func mountsUnder(dir string) ([]string, error) {
	infos, err := mountutils.ParseMountInfo("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	dir = filepath.Clean(dir)
	var under []string
	for _, m := range infos {
		if m.MountPoint == dir || strings.HasPrefix(m.MountPoint, dir+"/") {
			under = append(under, m.MountPoint)
		}
	}
	slices.Reverse(under)
	return under, nil
}

// unmountUnder takes every mount off dir and what is below it, lazily, so
// that removing dir afterwards cannot reach through a mount into a volume.
// A mount left behind by a check that passed fails t: the plugin leaked it.
func unmountUnder(t *testing.T, dir string) {
	for range 16 {
		left, err := mountsUnder(dir)
		if err != nil {
			t.Errorf("listing mounts under %s to clean up: %v", dir, err)
			return
		}
		if len(left) == 0 {
			return
		}
		if !t.Failed() {
			t.Errorf("after the check, still mounted: %s; want every mount the plugin made undone", strings.Join(left, ", "))
		}
		for _, p := range left {
			if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
				t.Errorf("cleaning up the mount on %s: %v", p, err)
			}
		}
	}
	t.Errorf("cleaning up the mounts under %s: still mounted after 16 rounds", dir)
}
