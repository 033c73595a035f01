package hostvolumes

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// SystemMounter is the Mounter of this machine's mount namespace.
type SystemMounter struct{}

// MountTmpfs mounts a tmpfs on target (nodev, nosuid), of size bytes
// when size > 0. Its root has the mode a tmpfs has by default, and the
// kubelet's memory emptyDir too: 1777 (sticky, as /tmp).
func (SystemMounter) MountTmpfs(target string, size int64) error {
	opts := "mode=1777"
	if size > 0 {
		opts += fmt.Sprintf(",size=%d", size)
	}
	if err := unix.Mount("tmpfs", target, "tmpfs", unix.MS_NODEV|unix.MS_NOSUID, opts); err != nil {
		return fmt.Errorf("mount tmpfs on %s: %w", target, err)
	}
	return nil
}

// BindFD bind-mounts the file open at fd onto target, through the
// descriptor's /proc/self/fd link (which the kernel resolves to the open
// file, not to a path that may have changed since), then checks that
// target shows that file; a target that shows another is unmounted and
// an error.
func (SystemMounter) BindFD(fd int, target string) error {
	if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", fd), target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind mount on %s: %w", target, err)
	}
	var want, got unix.Stat_t
	err := unix.Fstat(fd, &want)
	if err == nil {
		err = unix.Lstat(target, &got)
	}
	if err == nil && (want.Dev != got.Dev || want.Ino != got.Ino) {
		err = errors.New("it shows another file than the one opened")
	}
	if err != nil {
		_ = unix.Unmount(target, unix.MNT_DETACH)
		return fmt.Errorf("checking the bind mount on %s: %w", target, err)
	}
	return nil
}

// Unmount unmounts target; a target that is no mount point is success.
func (SystemMounter) Unmount(target string) error {
	if err := unix.Unmount(target, 0); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount %s: %w", target, err)
	}
	return nil
}

// IsMountPoint reports whether path, with its symbolic links resolved,
// is a mount point of this mount namespace.
func (SystemMounter) IsMountPoint(path string) (bool, error) {
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("resolving %s: %w", path, err)
	}
	mounted, err := mountinfo.Mounted(real)
	if err != nil {
		return false, fmt.Errorf("mount table: %w", err)
	}
	return mounted, nil
}
