package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	mount "k8s.io/mount-utils"
	utilexec "k8s.io/utils/exec"
)

// loopDevices attaches image files to loop devices. The kernel is the
// record: an image's device is found through sysfs, not remembered.
type loopDevices interface {
	// attach returns the loop device of image, attaching one if none is.
	attach(ctx context.Context, image string) (string, error)
	// find returns the loop device of image, or "" when none is attached.
	find(image string) (string, error)
	detach(ctx context.Context, dev string) error
}

// mounter mounts and formats for real.
type mounter interface {
	// formatAndMount mounts the block device source at the directory
	// target, making a filesystem of fsType first when source has none.
	formatAndMount(source, target, fsType string, options []string) error
	bindMount(source, target string, readOnly bool) error
	unmount(target string) error
	// isMountPoint reports whether path is a mount point (bind mounts
	// and files included); an error wraps os.ErrNotExist for no path.
	isMountPoint(path string) (bool, error)
}

// losetup is loopDevices over util-linux losetup and /sys/block.
type losetup struct{ sysBlock string }

func (l losetup) attach(ctx context.Context, image string) (string, error) {
	if dev, err := l.find(image); err != nil || dev != "" {
		return dev, err
	}
	// --nooverlap reuses a device another caller attached meanwhile.
	out, err := exec.CommandContext(ctx, "losetup", "--find", "--show", "--nooverlap", image).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("losetup %s: %w: %s", image, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func (l losetup) find(image string) (string, error) {
	files, err := filepath.Glob(filepath.Join(l.sysBlock, "loop*", "loop", "backing_file"))
	if err != nil {
		return "", fmt.Errorf("listing loop devices: %w", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // detached meanwhile
		} else if err != nil {
			return "", fmt.Errorf("reading %s: %w", f, err)
		}
		if strings.TrimSpace(string(b)) == image {
			return "/dev/" + filepath.Base(filepath.Dir(filepath.Dir(f))), nil
		}
	}
	return "", nil
}

// detach detaches dev and waits until the kernel has let it go: while
// another process still holds the device open (udev probing it, for one),
// losetup only marks it to be cleared on the last close, and a DeleteVolume
// right after the unstage would find the image still attached.
func (l losetup) detach(ctx context.Context, dev string) error {
	out, err := exec.CommandContext(ctx, "losetup", "--detach", dev).CombinedOutput()
	if err != nil {
		return fmt.Errorf("losetup --detach %s: %w: %s", dev, err, strings.TrimSpace(string(out)))
	}
	backing := filepath.Join(l.sysBlock, filepath.Base(dev), "loop", "backing_file")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(backing); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("losetup --detach %s: still attached after 10 s (held open by another process)", dev)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("losetup --detach %s: waiting for the kernel to release it: %w", dev, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// hostMounter is mounter over k8s.io/mount-utils.
type hostMounter struct{ m *mount.SafeFormatAndMount }

func newHostMounter() hostMounter {
	return hostMounter{m: mount.NewSafeFormatAndMount(mount.NewWithoutSystemd(""), utilexec.New())}
}

func (h hostMounter) formatAndMount(source, target, fsType string, options []string) error {
	var formatOpts []string
	if fsType == "" || fsType == "ext4" || fsType == "ext3" {
		// Sparse images: leave inode tables and the journal to the kernel.
		formatOpts = []string{"-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard"}
	}
	if err := h.m.FormatAndMountSensitiveWithFormatOptions(source, target, fsType, options, nil, formatOpts); err != nil {
		return fmt.Errorf("mounting %s at %s: %w", source, target, err)
	}
	return nil
}

func (h hostMounter) bindMount(source, target string, readOnly bool) error {
	opts := []string{"bind"}
	if readOnly {
		opts = append(opts, "ro")
	}
	if err := h.m.Mount(source, target, "", opts); err != nil {
		return fmt.Errorf("bind-mounting %s at %s: %w", source, target, err)
	}
	return nil
}

func (h hostMounter) unmount(target string) error {
	if err := h.m.Unmount(target); err != nil {
		return fmt.Errorf("unmounting %s: %w", target, err)
	}
	return nil
}

func (h hostMounter) isMountPoint(path string) (bool, error) {
	ok, err := h.m.IsMountPoint(path)
	if err != nil {
		return false, fmt.Errorf("checking mount point %s: %w", path, err)
	}
	return ok, nil
}
