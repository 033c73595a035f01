package hostvolumes

import (
	"errors"
	"fmt"
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
// or, with a subPath or a subPathExpr expanded from env (the container's
// resolved env, as host/expansion.SubPath expands it), the bind mount of
// that path inside the volume at its SubPathTarget (bindSubPath: opened
// without following links, created when missing, never outside the
// volume; CleanSubPaths removes it with the volume). A mount naming
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
			if err := checkSubPath(sub); err != nil {
				return nil, &volumemanager.FieldError{Field: subField, Detail: err.Error()}
			}
			target := SubPathTarget(h.root, pv.Pod, vm.Name, c.Name, i)
			if err := h.bindSubPath(path, sub, target); err != nil {
				return nil, &volumemanager.FieldError{Field: subField, Detail: fmt.Sprintf("failed to prepare subPath for volumeMount %q of container %q: %v", vm.Name, c.Name, err)}
			}
			path = target
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

// checkSubPath refuses an absolute sub path or one with a ".."
// component, before anything is opened.
func checkSubPath(sub string) error {
	if filepath.IsAbs(sub) || slices.Contains(strings.Split(filepath.ToSlash(sub), "/"), "..") {
		return fmt.Errorf("%q must be a relative path without \"..\"", sub)
	}
	return nil
}
