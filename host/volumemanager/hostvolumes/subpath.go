package hostvolumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
)

// subPathsDir is the directory of a pod's subPath bind mounts, beside
// its volumes: <pod dir>/volume-subpaths, the kubelet's name.
const subPathsDir = "volume-subpaths"

// maxStackedMounts bounds the unmounts of one subPath target: more than
// one mount there is a leftover of an interrupted set-up; this many is
// something else, which is reported rather than unmounted forever.
const maxStackedMounts = 8

// SubPathTarget is where the subPath of volumeMounts[index] of container
// of pod uid, in the volume named volume, is bind-mounted for the runtime:
// <pod dir>/volume-subpaths/<volume>/<container>/<index>. Container names
// are DNS labels, safe as directory names.
func SubPathTarget(root string, uid types.UID, volume, container string, index int) string {
	return filepath.Join(PodDir(root, uid), subPathsDir, volume, container, strconv.Itoa(index))
}

// CleanSubPaths unmounts and removes every subPath target of the volume
// named volume of pod uid, of every container, then the directories that
// leaves empty, up to the pod's directory. It reads the directories and
// the mount table, not what this process set up, so it finds the targets
// a previous run left. Nothing there is success. A target it cannot
// unmount, or that is not empty once unmounted, is an error and stays
// (it is never removed recursively: it may still show the volume).
func (h *Host) CleanSubPaths(uid types.UID, volume string) error {
	dir := filepath.Join(PodDir(h.root, uid), subPathsDir, volume)
	containers, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("subPath mounts of volume %q: %w", volume, err)
	}
	for _, c := range containers {
		cdir := filepath.Join(dir, c.Name())
		targets, err := os.ReadDir(cdir)
		if err != nil {
			return fmt.Errorf("subPath mounts of volume %q: %w", volume, err)
		}
		for _, t := range targets {
			if err := h.cleanSubPathTarget(filepath.Join(cdir, t.Name())); err != nil {
				return fmt.Errorf("subPath mounts of volume %q: %w", volume, err)
			}
		}
		if err := os.Remove(cdir); err != nil {
			return fmt.Errorf("subPath mounts of volume %q: %w", volume, err)
		}
	}
	if err := os.Remove(dir); err != nil {
		return fmt.Errorf("subPath mounts of volume %q: %w", volume, err)
	}
	removeEmptyParents(h.root, uid, dir)
	return nil
}

// cleanSubPathTarget unmounts target (every mount stacked there) and
// removes it.
func (h *Host) cleanSubPathTarget(target string) error {
	if err := h.unmountAll(target); err != nil {
		return err
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", target, err)
	}
	return nil
}

// unmountAll unmounts target until it is no mount point.
func (h *Host) unmountAll(target string) error {
	for range maxStackedMounts {
		mounted, err := h.m.IsMountPoint(target)
		if err != nil {
			return fmt.Errorf("%s: %w", target, err)
		}
		if !mounted {
			return nil
		}
		if err := h.m.Unmount(target); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s: still a mount point after %d unmounts", target, maxStackedMounts)
}
