package hostvolumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/expansion"
	"github.com/podhost/podhost/host/volumemanager"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// TargetPath is where on the host the volume name of pod uid is published:
// the emptyDir's directory, the hostPath's path, and for a plugin's
// volume <pod volume dir>/mount (the target the plugin publishes to).
func (h *Host) TargetPath(pv volumemanager.PodVolume) string {
	switch pv.Volume.Plugin {
	case volumemanager.PluginEmptyDir, volumemanager.PluginProjected, volumemanager.PluginConfigMap, volumemanager.PluginSecret, volumemanager.PluginDownwardAPI:
		return PodVolumeDir(h.root, pv.Pod, pv.Volume.Plugin, pv.Name)
	case volumemanager.PluginHostPath:
		if pv.Volume.HostPath != nil {
			return pv.Volume.HostPath.Path
		}
	}
	return filepath.Join(PodVolumeDir(h.root, pv.Pod, pv.Volume.Plugin, pv.Name), "mount")
}

// ContainerMounts are the runtime mounts of container c of pod: one per
// volumeMount, at its mountPath, from the target path of the volume that
// desired returns for its name (the volume manager's desired state),
// joined with subPath, or with subPathExpr expanded from env (the
// container's resolved env, as host/expansion.SubPath expands it), which
// is created when missing and must stay inside the volume. A mount naming
// no volume of the pod, or one not desired, a block volume, a subPathExpr
// with a variable missing from env or beside a subPath, a sub path
// leaving the volume, or Bidirectional mountPropagation in a container
// that is not privileged is an error naming the field.
func (h *Host) ContainerMounts(pod *v1.Pod, c *v1.Container, env map[string]string, desired func(name string) (volumemanager.PodVolume, bool)) ([]*runtimev1.Mount, error) {
	out := make([]*runtimev1.Mount, 0, len(c.VolumeMounts))
	for i, vm := range c.VolumeMounts {
		field := fmt.Sprintf("container %q volumeMounts[%d]", c.Name, i)
		j := slices.IndexFunc(pod.Spec.Volumes, func(v v1.Volume) bool { return v.Name == vm.Name })
		if j < 0 {
			return nil, &volumemanager.FieldError{Field: field + ".name", Detail: fmt.Sprintf("no volume %q in spec.volumes", vm.Name)}
		}
		if vm.MountPath == "" {
			return nil, &volumemanager.FieldError{Field: field + ".mountPath", Detail: "required"}
		}
		sub, subField := vm.SubPath, field+".subPath"
		if vm.SubPathExpr != "" {
			subField = field + ".subPathExpr"
			if vm.SubPath != "" {
				return nil, &volumemanager.FieldError{Field: subField, Detail: "subPathExpr and subPath are mutually exclusive"}
			}
			var err error
			if sub, err = expansion.SubPath(vm.SubPathExpr, env); err != nil {
				return nil, &volumemanager.FieldError{Field: subField, Detail: fmt.Sprintf("%q: %v", vm.SubPathExpr, err)}
			}
		}
		pv, ok := desired(vm.Name)
		if !ok {
			return nil, &volumemanager.FieldError{Field: field + ".name", Detail: fmt.Sprintf("volume %q is not mounted", vm.Name)}
		}
		if pv.Volume.Block {
			return nil, &volumemanager.FieldError{Field: field + ".name", Detail: fmt.Sprintf("volume %q is a block volume (volumeMode: Block); give it with volumeDevices", vm.Name)}
		}
		path := h.TargetPath(pv)
		if sub != "" {
			var err error
			if path, err = subPath(path, sub); err != nil {
				return nil, &volumemanager.FieldError{Field: subField, Detail: err.Error()}
			}
		}
		ro := vm.ReadOnly || pv.Volume.ReadOnly
		propagation, err := mountPropagation(c, vm.MountPropagation)
		if err != nil {
			return nil, &volumemanager.FieldError{Field: field + ".mountPropagation", Detail: err.Error()}
		}
		out = append(out, &runtimev1.Mount{ContainerPath: vm.MountPath, HostPath: path, Readonly: ro, Propagation: propagation})
	}
	return out, nil
}

// mountPropagation maps a volumeMount's mountPropagation as the kubelet
// does: unset and None are private, HostToContainer rslave,
// Bidirectional rshared, which only a privileged container may have.
func mountPropagation(c *v1.Container, mode *v1.MountPropagationMode) (runtimev1.MountPropagation, error) {
	if mode == nil {
		return runtimev1.MountPropagation_MOUNT_PROPAGATION_UNSPECIFIED, nil
	}
	switch *mode {
	case v1.MountPropagationNone:
		return runtimev1.MountPropagation_MOUNT_PROPAGATION_UNSPECIFIED, nil
	case v1.MountPropagationHostToContainer:
		return runtimev1.MountPropagation_MOUNT_PROPAGATION_HOST_TO_CONTAINER, nil
	case v1.MountPropagationBidirectional:
		if sc := c.SecurityContext; sc == nil || sc.Privileged == nil || !*sc.Privileged {
			//lint:ignore ST1005 the API server's words, which the field error quotes
			return 0, errors.New("Bidirectional mount propagation is available only to privileged containers")
		}
		return runtimev1.MountPropagation_MOUNT_PROPAGATION_BIDIRECTIONAL, nil
	}
	return 0, fmt.Errorf("unsupported value %q", *mode)
}

// subPath is sub inside the volume at root, created as a directory when
// missing. sub must be relative, without "..", and must not leave root
// through a symbolic link; the part that exists is checked before
// anything is created.
func subPath(root, sub string) (string, error) {
	if filepath.IsAbs(sub) || slices.Contains(strings.Split(filepath.ToSlash(sub), "/"), "..") {
		return "", fmt.Errorf("%q must be a relative path without \"..\"", sub)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolving the volume: %w", err)
	}
	inside := func(p string) bool {
		return p == realRoot || strings.HasPrefix(p, realRoot+string(filepath.Separator))
	}
	path := filepath.Join(root, sub)
	existing := path
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		existing = filepath.Dir(existing)
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", fmt.Errorf("resolving %q: %w", sub, err)
	}
	if !inside(real) {
		return "", fmt.Errorf("%q leaves the volume", sub)
	}
	if existing == path {
		return real, nil // a file or a directory: mounted as it is
	}
	// The directories created get the volume root's mode, as the
	// kubelet makes them: an emptyDir's 0777, with the setgid bit (and
	// fsGroup, inherited) of a pod with an fsGroup, and a tmpfs's sticky
	// bit.
	fi, err := os.Stat(realRoot)
	if err != nil {
		return "", fmt.Errorf("reading the volume: %w", err)
	}
	mode := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	rest, _ := filepath.Rel(existing, path)
	for _, name := range strings.Split(rest, string(filepath.Separator)) {
		real = filepath.Join(real, name)
		if err := os.Mkdir(real, 0o700); errors.Is(err, fs.ErrExist) {
			continue // made meanwhile by another container's mount
		} else if err != nil {
			return "", fmt.Errorf("creating %q: %w", sub, err)
		}
		if err := os.Chmod(real, mode); err != nil { // past the umask
			return "", fmt.Errorf("creating %q: %w", sub, err)
		}
	}
	return real, nil
}
