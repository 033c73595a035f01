package scsivolume

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	mountutils "k8s.io/mount-utils"

	"github.com/podhost/podhost/plugins/internal/scsi"
	"github.com/podhost/podhost/sdk/mount"
)

var mounter = mountutils.New("")

// MapBlock bind-mounts the staged block volume's device on the file
// targetPath, created with its parents when missing.
func (v *Volumes) MapBlock(ctx context.Context, id, stagingPath, targetPath string, readonly bool) error {
	if err := required("volume_id", id, "staging_path", stagingPath, "target_path", targetPath); err != nil {
		return err
	}
	defer v.lockVolume(id)()
	rec, err := v.staged(id, stagingPath, true)
	if err != nil {
		return err
	}
	if mounted, err := mount.IsMounted(targetPath); err != nil || mounted {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(targetPath), 0o750); err != nil {
		return fmt.Errorf("creating the parent of %s: %w", targetPath, err)
	}
	f, err := os.OpenFile(targetPath, os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		return fmt.Errorf("creating %s: %w", targetPath, err)
	}
	_ = f.Close()
	opts := []string{"bind"}
	if readonly {
		opts = append(opts, "ro")
	}
	if err := mounter.Mount(v.Tree().DevPath(rec.Disk.Name), targetPath, "", opts); err != nil {
		return fmt.Errorf("mapping %s on %s: %w", rec.Disk.Name, targetPath, err)
	}
	return v.midway(ctx)
}

// UnmapBlock unmounts and removes the file targetPath.
func (v *Volumes) UnmapBlock(_ context.Context, id, targetPath string) error {
	if err := required("volume_id", id, "target_path", targetPath); err != nil {
		return err
	}
	defer v.lockVolume(id)()
	if err := mount.Unmount(targetPath); err != nil {
		return err
	}
	if err := os.Remove(targetPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", targetPath, err)
	}
	return nil
}

// Metrics reports the usage of a published volume: statfs figures for a
// filesystem, the device size (BLKGETSIZE64) as total for a block volume.
func (v *Volumes) Metrics(_ context.Context, id, volumePath string) (mount.Usage, error) {
	if err := required("volume_id", id, "volume_path", volumePath); err != nil {
		return mount.Usage{}, err
	}
	fi, err := os.Stat(volumePath)
	if errors.Is(err, fs.ErrNotExist) {
		return mount.Usage{}, fmt.Errorf("%s: %w", volumePath, errNotFound)
	} else if err != nil {
		return mount.Usage{}, err
	}
	if fi.IsDir() {
		u, err := mount.MountUsage(volumePath)
		if errors.Is(err, mount.ErrNotMounted) {
			err = fmt.Errorf("%w: %w", errNotFound, err)
		}
		return u, err
	}
	if mounted, err := mount.IsMounted(volumePath); err != nil || !mounted {
		return mount.Usage{}, errors.Join(err, fmt.Errorf("%s: %w", volumePath, errNotFound))
	}
	size, err := scsi.Size(volumePath)
	return mount.Usage{TotalBytes: size}, err
}

// Reconstructed is what Reconstruct found at a target path.
type Reconstructed struct {
	Record
	Found bool
}

// Reconstruct tells which staged volume a target path shows: a directory
// mounted from the same filesystem as a staging path, or a file mapping a
// staged block volume's device.
func (v *Volumes) Reconstruct(_ context.Context, targetPath string) (Reconstructed, error) {
	if err := required("target_path", targetPath); err != nil {
		return Reconstructed{}, err
	}
	if mounted, err := mount.IsMounted(targetPath); err != nil || !mounted {
		return Reconstructed{}, err
	}
	target, err := statOf(targetPath)
	if err != nil {
		return Reconstructed{}, err
	}
	recs, err := v.records().all()
	if err != nil {
		return Reconstructed{}, err
	}
	for _, rec := range recs {
		if rec.Block {
			dev, err := statOf(v.Tree().DevPath(rec.Disk.Name))
			if err == nil && target.Mode&syscall.S_IFMT == syscall.S_IFBLK && dev.Rdev == target.Rdev {
				return Reconstructed{Record: rec, Found: true}, nil
			}
			continue
		}
		if mounted, _ := mount.IsMounted(rec.StagingPath); !mounted {
			continue
		}
		if staging, err := statOf(rec.StagingPath); err == nil && staging.Dev == target.Dev {
			return Reconstructed{Record: rec, Found: true}, nil
		}
	}
	return Reconstructed{}, nil
}

func statOf(path string) (*syscall.Stat_t, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil, fmt.Errorf("inspecting %s: %w", path, err)
	}
	return &st, nil
}
