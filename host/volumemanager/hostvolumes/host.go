package hostvolumes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/ownership"
)

// ErrNotHostVolume is wrapped by the error for a volume of a plugin the
// host does not serve itself.
var ErrNotHostVolume = errors.New("not a host volume")

// Mounter is the host's mount table, as Host needs it.
type Mounter interface {
	// MountTmpfs mounts a tmpfs of size bytes (0: the kernel's default) on
	// target.
	MountTmpfs(target string, size int64) error
	// BindFD bind-mounts the file or directory open at fd (an O_PATH
	// descriptor) onto target, an existing directory or file of the same
	// kind, and checks that target then shows it.
	BindFD(fd int, target string) error
	// Unmount unmounts target.
	Unmount(target string) error
	// IsMountPoint reports whether path is a mount point; a missing path
	// is not.
	IsMountPoint(path string) (bool, error)
}

// Host serves emptyDir and hostPath volumes under root, the host's root
// directory.
type Host struct {
	root string
	m    Mounter
}

// New returns a Host for the root directory root.
func New(root string, m Mounter) *Host { return &Host{root: root, m: m} }

// Serves reports whether the host serves volumes of plugin itself.
func Serves(plugin string) bool {
	return plugin == volumemanager.PluginEmptyDir || plugin == volumemanager.PluginHostPath
}

// Publish sets up an emptyDir (its directory, and a tmpfs on it for
// medium Memory) or checks a hostPath against its type, creating it for
// DirectoryOrCreate and FileOrCreate. It is idempotent.
func (h *Host) Publish(_ context.Context, pv volumemanager.PodVolume) error {
	switch pv.Volume.Plugin {
	case volumemanager.PluginEmptyDir:
		return h.setUpEmptyDir(pv)
	case volumemanager.PluginHostPath:
		if pv.Volume.HostPath == nil {
			return &volumemanager.FieldError{Field: "hostPath", Detail: "no source"}
		}
		return checkHostPath(pv.Volume.HostPath)
	}
	return fmt.Errorf("%w: plugin %s", ErrNotHostVolume, pv.Volume.Plugin)
}

// Unpublish removes an emptyDir (unmounting its tmpfs first) and the pod
// directories it leaves empty; a hostPath needs nothing. Nothing to undo
// is success.
func (h *Host) Unpublish(_ context.Context, pv volumemanager.PodVolume) error {
	switch pv.Volume.Plugin {
	case volumemanager.PluginEmptyDir:
		return h.tearDownEmptyDir(pv)
	case volumemanager.PluginHostPath:
		return nil
	}
	return fmt.Errorf("%w: plugin %s", ErrNotHostVolume, pv.Volume.Plugin)
}

// Path is where on the host the volume of pv is, for a container mount;
// ok is false for a volume of a plugin the host does not serve.
func (h *Host) Path(pv volumemanager.PodVolume) (path string, ok bool) {
	switch pv.Volume.Plugin {
	case volumemanager.PluginEmptyDir:
		return PodVolumeDir(h.root, pv.Pod, pv.Volume.Plugin, pv.Name), true
	case volumemanager.PluginHostPath:
		if pv.Volume.HostPath != nil {
			return pv.Volume.HostPath.Path, true
		}
	}
	return "", false
}

func (h *Host) setUpEmptyDir(pv volumemanager.PodVolume) error {
	dir := PodVolumeDir(h.root, pv.Pod, pv.Volume.Plugin, pv.Name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("creating emptyDir %s: %w", dir, err)
	}
	src := pv.Volume.EmptyDir
	if src != nil && src.Medium == v1.StorageMediumMemory {
		mounted, err := h.m.IsMountPoint(dir)
		if err != nil {
			return fmt.Errorf("emptyDir %s: %w", dir, err)
		}
		if !mounted {
			var size int64
			if src.SizeLimit != nil && src.SizeLimit.Sign() > 0 {
				size = src.SizeLimit.Value()
			}
			if err := h.m.MountTmpfs(dir, size); err != nil {
				return fmt.Errorf("mounting tmpfs on emptyDir %s: %w", dir, err)
			}
		}
	}
	// Every user of the pod's containers may write, as in the kubelet,
	// which leaves the other bits of a directory already writable (a
	// tmpfs root's sticky bit, the setgid bit of an earlier set-up).
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("emptyDir %s: %w", dir, err)
	}
	if fi.Mode().Perm() != 0o777 {
		if err := os.Chmod(dir, 0o777); err != nil {
			return fmt.Errorf("emptyDir %s: %w", dir, err)
		}
	}
	// The pod's fsGroup owns it; emptyDir ignores fsGroupChangePolicy, as
	// in the kubelet.
	if g := pv.Args.FSGroup; g != nil {
		if err := ownership.Change(dir, ownership.Options{FSGroup: *g}); err != nil {
			return fmt.Errorf("emptyDir %s: %w", dir, err)
		}
	}
	return nil
}

func (h *Host) tearDownEmptyDir(pv volumemanager.PodVolume) error {
	dir := PodVolumeDir(h.root, pv.Pod, pv.Volume.Plugin, pv.Name)
	mounted, err := h.m.IsMountPoint(dir)
	if err != nil {
		return fmt.Errorf("emptyDir %s: %w", dir, err)
	}
	if mounted {
		if err := h.m.Unmount(dir); err != nil {
			return fmt.Errorf("unmounting emptyDir %s: %w", dir, err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing emptyDir %s: %w", dir, err)
	}
	removeEmptyParents(h.root, pv.Pod, dir)
	return nil
}

// RemovePodVolumeDir removes the pod volume directory of a plugin's
// volume once the plugin has unpublished it: its "mount" target and the
// directory itself, which must then be empty (anything left stays, and
// is an error), and the pod directories it leaves empty. A missing
// directory is success.
func RemovePodVolumeDir(root string, uid types.UID, plugin, name string) error {
	dir := PodVolumeDir(root, uid, plugin, name)
	for _, d := range []string{filepath.Join(dir, "mount"), dir} {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing pod volume directory: %w", err)
		}
	}
	removeEmptyParents(root, uid, dir)
	return nil
}

// removeEmptyParents removes the plugin's, volumes and pod directories
// above dir once empty; a non-empty one stays (os.Remove fails).
func removeEmptyParents(root string, uid types.UID, dir string) {
	for d, stop := filepath.Dir(dir), filepath.Dir(PodDir(root, uid)); d != stop; d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
}
