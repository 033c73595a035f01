package mount

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	mountutils "k8s.io/mount-utils"
	utilexec "k8s.io/utils/exec"

	"github.com/podhost/podhost/sdk"
)

// mounter is the node's mount(8), shared by every call.
var mounter = mountutils.New("")

// maxStacked bounds how many mounts Unmount takes off one path.
const maxStacked = 16

// IsMounted reports whether path is a mount point. A path that does not
// exist is not mounted; a stale mount (a disconnected network filesystem)
// is, so that it gets unmounted.
func IsMounted(path string) (bool, error) {
	ok, err := mounter.IsMountPoint(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case mountutils.IsCorruptedMnt(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("checking whether %s is mounted: %w", path, err)
	}
	return ok, nil
}

// BindOnce bind-mounts the directory source onto target, read-only when
// readonly is set, and creates target as a directory, with its parents,
// when it is missing.
// It does nothing when target shows source already in the mode asked; when
// target shows another directory, or source in the other mode, it changes
// nothing and answers an error that wraps sdk.ErrAlreadyExists (a Publish
// called again with other arguments).
func BindOnce(source, target string, readonly bool) error {
	switch mounted, from, err := MountedFrom(target, source); {
	case err != nil:
		return err
	case mounted && !from:
		return fmt.Errorf("%s shows another directory than %s: %w", target, source, sdk.ErrAlreadyExists)
	case mounted:
		ro, err := readOnly(target)
		if err != nil {
			return err
		}
		if ro != readonly {
			return fmt.Errorf("%s is mounted with read-only %v, asked %v: %w", target, ro, readonly, sdk.ErrAlreadyExists)
		}
		return nil
	}
	opts := []string{"bind"}
	if readonly {
		opts = append(opts, "ro")
	}
	return mountOnce(target, func() error { return mounter.Mount(source, target, "", opts) })
}

// readOnly reports whether the topmost mount on path is read-only.
func readOnly(path string) (bool, error) {
	infos, err := mountutils.ParseMountInfo("/proc/self/mountinfo")
	if err != nil {
		return false, fmt.Errorf("reading the mount table: %w", err)
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	path = filepath.Clean(path)
	for _, m := range slices.Backward(infos) {
		if m.MountPoint == path {
			return slices.Contains(m.MountOptions, "ro"), nil
		}
	}
	return false, fmt.Errorf("%s is not in the mount table", path)
}

// FormatAndMount mounts the block device device on target as fstype with
// options, formatting it as fstype first when it holds no filesystem, and
// creates target as a directory when it is missing. A device that holds
// another filesystem is mounted as it is, or refused by mount(8). It does
// nothing when target is mounted already.
func FormatAndMount(device, target, fstype string, options []string) error {
	safe := mountutils.NewSafeFormatAndMount(mounter, utilexec.New())
	return mountOnce(target, func() error { return safe.FormatAndMount(device, target, fstype, options) })
}

func mountOnce(target string, mount func() error) error {
	switch mounted, err := IsMounted(target); {
	case err != nil:
		return err
	case mounted:
		return nil
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return fmt.Errorf("creating mount point %s: %w", target, err)
	}
	if err := mount(); err != nil {
		return fmt.Errorf("mounting on %s%s: %w", target, needsRoot(), err)
	}
	return nil
}

// needsRoot says, for the error of a failed mount or unmount, that the
// process is not root, which mount(8) reports only as "exit status 32".
func needsRoot() string {
	if uid := os.Geteuid(); uid != 0 {
		return fmt.Sprintf(" (needs root; running as uid %d)", uid)
	}
	return ""
}

// Unmount unmounts every mount stacked on path and keeps path. It succeeds
// when path is not mounted or does not exist.
func Unmount(path string) error {
	for range maxStacked {
		switch mounted, err := IsMounted(path); {
		case err != nil:
			return err
		case !mounted:
			return nil
		}
		if err := mounter.Unmount(path); err != nil {
			return fmt.Errorf("unmounting %s%s: %w", path, needsRoot(), err)
		}
	}
	return fmt.Errorf("unmounting %s: still mounted after %d unmounts", path, maxStacked)
}

// UnmountAndRemove unmounts every mount stacked on path and removes the
// directory path, which must then be empty. It succeeds when path does
// not exist.
func UnmountAndRemove(path string) error {
	if err := Unmount(path); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", path, err)
	}
	return nil
}

// MountedFrom reports whether path is a mount point (mounted) and whether
// what is mounted there is the directory dir (from), as after
// BindOnce(dir, path, …): it compares the root of the mount with dir. A
// plugin uses it to tell "staged already" from "another volume is staged
// here".
func MountedFrom(path, dir string) (mounted, from bool, err error) {
	if mounted, err = IsMounted(path); err != nil || !mounted {
		return mounted, false, err
	}
	a, err := os.Stat(path)
	if err != nil {
		return true, false, fmt.Errorf("inspecting mount point %s: %w", path, err)
	}
	b, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, false, nil
	} else if err != nil {
		return true, false, fmt.Errorf("inspecting %s: %w", dir, err)
	}
	return true, os.SameFile(a, b), nil
}
