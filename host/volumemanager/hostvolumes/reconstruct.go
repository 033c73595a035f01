package hostvolumes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
)

// PodVolumeDirs lists the pod volume directories under the root: every
// <root>/pods/<uid>/volumes/<plugin>/<name> directory and every
// <root>/pods/<uid>/volumeDevices/<plugin>/<name> device file of a raw
// block volume. Only these directories are read, so the pods' log
// directories, which share <root>/pods, are never mistaken for pods.
func (h *Host) PodVolumeDirs(context.Context) ([]volumemanager.PodVolumeDir, error) {
	var out []volumemanager.PodVolumeDir
	for _, kind := range []string{"volumes", "volumeDevices"} {
		block := kind == "volumeDevices"
		matches, err := filepath.Glob(filepath.Join(h.root, "pods", "*", kind, "*~*", "*"))
		if err != nil {
			return nil, fmt.Errorf("listing pod volume directories: %w", err)
		}
		for _, m := range matches {
			if fi, err := os.Lstat(m); err != nil || fi.IsDir() == block {
				continue
			}
			pluginDir := filepath.Dir(m)
			out = append(out, volumemanager.PodVolumeDir{
				Pod:    types.UID(filepath.Base(filepath.Dir(filepath.Dir(pluginDir)))),
				Plugin: unescapePlugin(filepath.Base(pluginDir)),
				Name:   filepath.Base(m),
				Block:  block,
			})
		}
	}
	return out, nil
}

// Mounted reports whether path is a mount point (a missing path is not).
func (h *Host) Mounted(path string) (bool, error) { return h.m.IsMountPoint(path) }

// Reconstruct rebuilds an emptyDir from its directory: published, a
// tmpfs (medium Memory) when the directory is a mount point. Other
// plugins' directories give an error wrapping ErrNotHostVolume.
func (h *Host) Reconstruct(_ context.Context, dir volumemanager.PodVolumeDir) (volumemanager.Reconstructed, error) {
	if dir.Plugin != volumemanager.PluginEmptyDir {
		return volumemanager.Reconstructed{}, fmt.Errorf("%w: plugin %s", ErrNotHostVolume, dir.Plugin)
	}
	path := PodVolumeDir(h.root, dir.Pod, dir.Plugin, dir.Name)
	mounted, err := h.m.IsMountPoint(path)
	if err != nil {
		return volumemanager.Reconstructed{}, fmt.Errorf("emptyDir %s: %w", path, err)
	}
	src := &v1.EmptyDirVolumeSource{}
	if mounted {
		src.Medium = v1.StorageMediumMemory
	}
	return volumemanager.Reconstructed{
		Volume: volumemanager.Volume{
			ID:       volumemanager.VolumeID(volumemanager.PluginEmptyDir + "/" + string(dir.Pod) + "-" + dir.Name),
			Plugin:   volumemanager.PluginEmptyDir,
			EmptyDir: src,
		},
		Published: true,
	}, nil
}
