package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// stage attaches the volume's image to a loop device and, for a mount
// volume, mounts it at staging (making a filesystem when it has none).
// A block volume is staged by its loop device alone.
func (d *driver) stage(ctx context.Context, id, staging string, c volumeCap) error {
	unlock, err := d.lockVolume(id)
	if err != nil {
		return err
	}
	defer unlock()
	if fi, err := os.Stat(staging); err != nil {
		return fmt.Errorf("staging_target_path %q: the CO creates it: %w: %w", staging, err, errPrecondition)
	} else if !fi.IsDir() {
		return fmt.Errorf("staging_target_path %q is not a directory: %w", staging, errInvalid)
	}
	rec, ok, err := d.readRecord(id)
	if err != nil {
		return err
	}
	if ok && rec.StagingPath != "" {
		if rec.StagingPath != staging {
			return fmt.Errorf("volume %s is staged at %q: %w", id, rec.StagingPath, errPrecondition)
		}
		if rec.Block != c.block {
			return fmt.Errorf("volume %s is staged here with another access type: %w", id, errExists)
		}
	}
	wasStaged := ok && rec.StagingPath != ""
	rec.StagingPath, rec.Block = staging, c.block
	if err := d.writeRecord(id, rec); err != nil {
		return err
	}
	err = d.stageDevice(ctx, id, staging, c)
	if err != nil && !wasStaged {
		d.rollbackStage(ctx, id, staging)
	}
	return err
}

func (d *driver) stageDevice(ctx context.Context, id, staging string, c volumeCap) error {
	dev, err := d.loops.attach(ctx, d.vols.imagePath(id))
	if err != nil || c.block {
		return err
	}
	if mounted, err := d.mounts.isMountPoint(staging); err != nil || mounted {
		return err
	}
	opts := slices.Clone(c.flags)
	if c.readOnly() {
		opts = append(opts, "ro")
	}
	return d.mounts.formatAndMount(dev, staging, c.fsType, opts)
}

// rollbackStage undoes a failed first stage as far as it can, even when
// the stage failed because the caller gave up.
func (d *driver) rollbackStage(ctx context.Context, id, staging string) {
	if err := d.unstageLocked(context.WithoutCancel(ctx), id, staging); err != nil {
		d.log.Error("undoing a failed stage", "volume", id, "err", err)
	}
}

// unstage undoes stage. A volume not staged at staging is done.
func (d *driver) unstage(ctx context.Context, id, staging string) error {
	unlock, err := d.lockVolume(id)
	if err != nil {
		return err
	}
	defer unlock()
	return d.unstageLocked(ctx, id, staging)
}

// lockVolume locks the existing volume id for one operation.
func (d *driver) lockVolume(id string) (unlock func(), err error) {
	if _, err := d.vols.get(id); err != nil {
		return nil, err
	}
	return d.locks.lock(id)
}

func (d *driver) unstageLocked(ctx context.Context, id, staging string) error {
	rec, ok, err := d.readRecord(id)
	if err != nil || !ok || rec.StagingPath != staging {
		return err
	}
	for t := range rec.Targets {
		if mounted, err := d.mounts.isMountPoint(t); err == nil && mounted {
			return fmt.Errorf("volume %s is still published at %q: %w", id, t, errPrecondition)
		}
	}
	if !rec.Block {
		if err := d.unmountIfMounted(staging); err != nil {
			return err
		}
	}
	if err := d.detach(ctx, id); err != nil {
		return err
	}
	return d.writeRecord(id, nodeRecord{})
}

// publish makes the volume available at target: a bind mount of the
// staging mount (or of the loop device, for a block volume, on a file the
// driver creates). Without staging, publish attaches and mounts itself.
func (d *driver) publish(ctx context.Context, id, staging, target string, c volumeCap, readOnly, ephemeral bool) error {
	unlock, err := d.lockVolume(id)
	if err != nil {
		return err
	}
	defer unlock()
	rec, ok, err := d.readRecord(id)
	if err != nil {
		return err
	}
	staged := d.cfg.stageUnstage && !ephemeral
	if staged {
		switch {
		case staging == "":
			return fmt.Errorf("staging_target_path: required, the driver stages volumes: %w", errPrecondition)
		case !ok || rec.StagingPath != staging:
			return fmt.Errorf("volume %s is not staged at %q: %w", id, staging, errPrecondition)
		case rec.Block != c.block:
			return fmt.Errorf("volume %s is staged with another access type: %w", id, errInvalid)
		}
	}
	readOnly = readOnly || c.readOnly()
	want := targetRecord{ReadOnly: readOnly, Block: c.block, SingleWriter: c.singleWriter(), Ephemeral: ephemeral}
	if have, ok := rec.Targets[target]; ok {
		if mounted, err := d.mounts.isMountPoint(target); err == nil && mounted {
			if have.ReadOnly != want.ReadOnly || have.Block != want.Block {
				return fmt.Errorf("volume %s is published at %q with other options: %w", id, target, errExists)
			}
			return nil
		}
	}
	for t, tr := range rec.Targets {
		if t == target || !(tr.SingleWriter || want.SingleWriter) {
			continue
		}
		if mounted, err := d.mounts.isMountPoint(t); err == nil && mounted {
			return fmt.Errorf("volume %s is single-writer and published at %q: %w", id, t, errPrecondition)
		}
	}
	if rec.Targets == nil {
		rec.Targets = map[string]targetRecord{}
	}
	rec.Targets[target] = want
	if err := d.writeRecord(id, rec); err != nil {
		return err
	}
	if err := d.publishDevice(ctx, id, staging, target, c, readOnly, staged); err != nil {
		// Undo it even when it failed because the caller gave up.
		if uerr := d.unpublishLocked(context.WithoutCancel(ctx), id, target); uerr != nil {
			d.log.Error("undoing a failed publish", "volume", id, "err", uerr)
		}
		return err
	}
	return nil
}

func (d *driver) publishDevice(ctx context.Context, id, staging, target string, c volumeCap, readOnly, staged bool) error {
	var dev string
	var err error
	if c.block || !staged {
		if dev, err = d.loops.attach(ctx, d.vols.imagePath(id)); err != nil {
			return err
		}
	}
	if c.block {
		f, err := os.OpenFile(target, os.O_CREATE|os.O_RDONLY, 0o640)
		if err != nil {
			return fmt.Errorf("creating target file: %w", err)
		}
		f.Close()
		return d.mounts.bindMount(dev, target, readOnly)
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return fmt.Errorf("creating target dir: %w", err)
	}
	if staged {
		if mounted, err := d.mounts.isMountPoint(staging); err != nil || !mounted {
			return fmt.Errorf("volume %s: nothing is mounted at staging_target_path %q (%v): %w", id, staging, err, errPrecondition)
		}
		return d.mounts.bindMount(staging, target, readOnly)
	}
	opts := slices.Clone(c.flags)
	if readOnly {
		opts = append(opts, "ro")
	}
	return d.mounts.formatAndMount(dev, target, c.fsType, opts)
}

// unpublish undoes publish and removes target. A target that is not there
// is done.
func (d *driver) unpublish(ctx context.Context, id, target string) error {
	unlock, err := d.lockVolume(id)
	if err != nil {
		return err
	}
	defer unlock()
	return d.unpublishLocked(ctx, id, target)
}

func (d *driver) unpublishLocked(ctx context.Context, id, target string) error {
	rec, _, err := d.readRecord(id)
	if err != nil {
		return err
	}
	_, recorded := rec.Targets[target]
	mounted, err := d.mounts.isMountPoint(target)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case mounted:
		if err := d.mounts.unmount(target); err != nil {
			return err
		}
		fallthrough
	case recorded:
		if err := os.Remove(target); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing target: %w", err)
		}
	}
	delete(rec.Targets, target)
	if rec.StagingPath == "" && len(rec.Targets) == 0 {
		if err := d.detach(ctx, id); err != nil {
			return err
		}
	}
	return d.writeRecord(id, rec)
}

// unmountIfMounted unmounts path when it is a mount point.
func (d *driver) unmountIfMounted(path string) error {
	mounted, err := d.mounts.isMountPoint(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && !mounted) {
		return nil
	} else if err != nil {
		return err
	}
	return d.mounts.unmount(path)
}

// detach releases the volume's loop device, if it has one.
func (d *driver) detach(ctx context.Context, id string) error {
	dev, err := d.loops.find(d.vols.imagePath(id))
	if err != nil || dev == "" {
		return err
	}
	return d.loops.detach(ctx, dev)
}

// volumeStats is the usage of a volume at path, where it is published or
// staged.
type volumeStats struct {
	block                             bool
	totalBytes, availBytes, usedBytes int64
	inodes, inodesFree, inodesUsed    int64
}

func (d *driver) stats(id, path string) (volumeStats, error) {
	if _, err := d.vols.get(id); err != nil {
		return volumeStats{}, err
	}
	rec, _, err := d.readRecord(id)
	if err != nil {
		return volumeStats{}, err
	}
	t, published := rec.Targets[path]
	staged := path != "" && path == rec.StagingPath
	if !published && !staged {
		return volumeStats{}, fmt.Errorf("volume %s is not published or staged at %q: %w", id, path, errNotFound)
	}
	block := t.Block || (!published && rec.Block)
	// Everything but a block volume's staging dir is a mount of the volume.
	if published || !block {
		mounted, err := d.mounts.isMountPoint(path)
		if errors.Is(err, os.ErrNotExist) || (err == nil && !mounted) {
			return volumeStats{}, fmt.Errorf("volume %s is not mounted at %q: %w", id, path, errNotFound)
		} else if err != nil {
			return volumeStats{}, err
		}
	}
	if block {
		return blockStats(d, id, path, published)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return volumeStats{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	bs := st.Bsize
	return volumeStats{
		totalBytes: int64(st.Blocks) * bs, availBytes: int64(st.Bavail) * bs,
		usedBytes: int64(st.Blocks-st.Bfree) * bs,
		inodes:    int64(st.Files), inodesFree: int64(st.Ffree), inodesUsed: int64(st.Files - st.Ffree),
	}, nil
}

// blockStats is the size of the block device at a published path (or of
// the volume's loop device, for its staging path).
func blockStats(d *driver, id, path string, published bool) (volumeStats, error) {
	dev := path
	if !published {
		var err error
		if dev, err = d.loops.find(d.vols.imagePath(id)); err != nil {
			return volumeStats{}, err
		} else if dev == "" {
			return volumeStats{}, fmt.Errorf("volume %s has no loop device: %w", id, errNotFound)
		}
	}
	f, err := os.Open(dev)
	if err != nil {
		return volumeStats{}, fmt.Errorf("opening %s: %w", dev, err)
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return volumeStats{}, fmt.Errorf("sizing %s: %w", dev, err)
	}
	return volumeStats{block: true, totalBytes: size}, nil
}
