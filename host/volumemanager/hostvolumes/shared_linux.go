package hostvolumes

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// MakeRShared makes dir, the host's root directory, a shared mount,
// recursively, as the kubelet makes its own: a volume mounted with
// mountPropagation HostToContainer or Bidirectional needs its host side on
// a shared mount (the runtime refuses it otherwise), and the mounts made
// under it later (a CSI publish, a tmpfs) then propagate. A dir already on
// a shared mount (a systemd host's / is one) is left alone; else it is
// bind-mounted on itself and made rshared. It is never undone: containers
// that outlive the host keep receiving the mounts made under it.
func MakeRShared(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", dir, err)
	}
	shared, err := onSharedMount(real)
	if err != nil {
		return err
	}
	if shared {
		return nil
	}
	if err := unix.Mount(real, real, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mounting %s on itself: %w", real, err)
	}
	if err := unix.Mount("", real, "", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("making %s rshared: %w", real, err)
	}
	return nil
}

// onSharedMount reports whether the mount that path is on (the deepest
// mount point above it) is shared.
func onSharedMount(path string) (bool, error) {
	mounts, err := mountinfo.GetMounts(mountinfo.ParentsFilter(path))
	if err != nil {
		return false, fmt.Errorf("mount table: %w", err)
	}
	var on *mountinfo.Info
	for _, m := range mounts {
		if on == nil || len(m.Mountpoint) >= len(on.Mountpoint) {
			on = m
		}
	}
	if on == nil {
		return false, fmt.Errorf("no mount holds %s", path)
	}
	return slices.ContainsFunc(strings.Fields(on.Optional), func(f string) bool { return strings.HasPrefix(f, "shared:") }), nil
}
