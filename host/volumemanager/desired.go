package volumemanager

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Resolver finds the PersistentVolume bound to a claim of a pod (in the
// pod's namespace): the local API objects in standalone mode and for
// static pods, the API server's for the pods of the API server. It is
// given the pod so that it can tell where the pod came from.
type Resolver interface {
	// PersistentVolume returns the claim and the volume it is bound to; a
	// nil volume, or an error wrapping ErrClaimNotBound, is a claim not
	// bound yet, which the pod's next sync asks again.
	PersistentVolume(ctx context.Context, pod *v1.Pod, claim string) (*v1.PersistentVolumeClaim, *v1.PersistentVolume, error)
}

// ErrClaimNotBound is wrapped by the error of a claim that is not bound to
// a volume yet: not an invalid spec, the claim may be bound later.
var ErrClaimNotBound = errors.New("is not bound")

// DesiredVolumes is the desired state of one pod: a PodVolume for each of
// spec.volumes. A malformed or unsupported volume gives a FieldError
// naming the field (spec.volumes[0].csi.driver: required); a claim the
// resolver cannot find gives its error, wrapped.
func DesiredVolumes(ctx context.Context, pod *v1.Pod, r Resolver) ([]PodVolume, error) {
	var out []PodVolume
	for i := range pod.Spec.Volumes {
		sv := &pod.Spec.Volumes[i]
		field := fmt.Sprintf("spec.volumes[%d]", i)
		if sv.Name == "" {
			return nil, &FieldError{field + ".name", "required"}
		}
		vol, err := desiredVolume(ctx, pod, sv, field, r)
		if err != nil {
			return nil, err
		}
		pv := PodVolume{Pod: pod.UID, Name: sv.Name, Volume: vol, Args: PodMountArgs(pod)}
		if sv.PersistentVolumeClaim != nil {
			pv.Claim = types.NamespacedName{Namespace: pod.Namespace, Name: sv.PersistentVolumeClaim.ClaimName}
		}
		out = append(out, pv)
	}
	return out, nil
}

func desiredVolume(ctx context.Context, pod *v1.Pod, sv *v1.Volume, field string, r Resolver) (Volume, error) {
	private := func(plugin string) VolumeID {
		return VolumeID(plugin + "/" + string(pod.UID) + "-" + sv.Name)
	}
	switch {
	case sv.CSI != nil:
		if sv.CSI.Driver == "" {
			return Volume{}, &FieldError{field + ".csi.driver", "required"}
		}
		ro := sv.CSI.ReadOnly != nil && *sv.CSI.ReadOnly
		src := &v1.CSIPersistentVolumeSource{Driver: sv.CSI.Driver, VolumeHandle: inlineHandle(pod.UID, sv.Name), ReadOnly: ro, VolumeAttributes: sv.CSI.VolumeAttributes}
		if sv.CSI.FSType != nil {
			src.FSType = *sv.CSI.FSType
		}
		if ref := sv.CSI.NodePublishSecretRef; ref != nil {
			// An inline volume's publish secret is in the pod's namespace.
			src.NodePublishSecretRef = &v1.SecretReference{Name: ref.Name, Namespace: pod.Namespace}
		}
		return Volume{ID: private(PluginCSI), Plugin: PluginCSI, ReadOnly: ro, CSI: src, ForPod: pod.UID}, nil
	case sv.EmptyDir != nil:
		switch sv.EmptyDir.Medium {
		case v1.StorageMediumDefault, v1.StorageMediumMemory:
		default:
			return Volume{}, &FieldError{field + ".emptyDir.medium", fmt.Sprintf("unsupported %q (want \"\" or \"Memory\")", sv.EmptyDir.Medium)}
		}
		return Volume{ID: private(PluginEmptyDir), Plugin: PluginEmptyDir, EmptyDir: sv.EmptyDir}, nil
	case sv.HostPath != nil:
		if sv.HostPath.Path == "" {
			return Volume{}, &FieldError{field + ".hostPath.path", "required"}
		}
		return Volume{ID: private(PluginHostPath), Plugin: PluginHostPath, HostPath: sv.HostPath}, nil
	case sv.PersistentVolumeClaim != nil:
		return claimVolume(ctx, pod, sv, field, r)
	case sv.Projected != nil:
		return Volume{ID: private(PluginProjected), Plugin: PluginProjected, ReadOnly: true, Projected: sv.Projected}, nil
	case sv.ConfigMap != nil:
		cm := sv.ConfigMap
		src := &v1.ProjectedVolumeSource{DefaultMode: cm.DefaultMode, Sources: []v1.VolumeProjection{{ConfigMap: &v1.ConfigMapProjection{
			LocalObjectReference: cm.LocalObjectReference, Items: cm.Items, Optional: cm.Optional}}}}
		return Volume{ID: private(PluginConfigMap), Plugin: PluginConfigMap, ReadOnly: true, Projected: src}, nil
	case sv.Secret != nil:
		s := sv.Secret
		src := &v1.ProjectedVolumeSource{DefaultMode: s.DefaultMode, Sources: []v1.VolumeProjection{{Secret: &v1.SecretProjection{
			LocalObjectReference: v1.LocalObjectReference{Name: s.SecretName}, Items: s.Items, Optional: s.Optional}}}}
		return Volume{ID: private(PluginSecret), Plugin: PluginSecret, ReadOnly: true, Projected: src}, nil
	case sv.DownwardAPI != nil:
		d := sv.DownwardAPI
		src := &v1.ProjectedVolumeSource{DefaultMode: d.DefaultMode, Sources: []v1.VolumeProjection{{DownwardAPI: &v1.DownwardAPIProjection{Items: d.Items}}}}
		return Volume{ID: private(PluginDownwardAPI), Plugin: PluginDownwardAPI, ReadOnly: true, Projected: src}, nil
	}
	if name := firstSet(&sv.VolumeSource); name != "" {
		return Volume{}, &FieldError{field + "." + name, "unsupported volume source (want csi, persistentVolumeClaim, emptyDir, hostPath, projected, configMap, secret or downwardAPI)"}
	}
	return Volume{}, &FieldError{field, "no volume source"}
}

// firstSet is the JSON name of the first non-nil pointer field of the
// struct that src points to: the volume source a spec sets.
func firstSet(src any) string {
	v := reflect.ValueOf(src).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return ""
}

func claimVolume(ctx context.Context, pod *v1.Pod, sv *v1.Volume, field string, r Resolver) (Volume, error) {
	src := sv.PersistentVolumeClaim
	if src.ClaimName == "" {
		return Volume{}, &FieldError{field + ".persistentVolumeClaim.claimName", "required"}
	}
	if r == nil {
		return Volume{}, &FieldError{field + ".persistentVolumeClaim", "no claim resolver on this host"}
	}
	claim, pv, err := r.PersistentVolume(ctx, pod, src.ClaimName)
	if err != nil {
		return Volume{}, fmt.Errorf("%s.persistentVolumeClaim: claim %s/%s: %w", field, pod.Namespace, src.ClaimName, err)
	}
	if pv == nil {
		return Volume{}, fmt.Errorf("%s.persistentVolumeClaim: claim %s/%s %w", field, pod.Namespace, src.ClaimName, ErrClaimNotBound)
	}
	pvField := "persistentVolume " + pv.Name + " spec"
	vol := Volume{
		PV:           pv.Name,
		Shared:       true,
		ReadOnly:     src.ReadOnly,
		Block:        pv.Spec.VolumeMode != nil && *pv.Spec.VolumeMode == v1.PersistentVolumeBlock,
		MountOptions: slices.Clone(pv.Spec.MountOptions),
		AccessModes:  slices.Clone(pv.Spec.AccessModes),
	}
	if claim != nil && claim.Spec.VolumeMode != nil && *claim.Spec.VolumeMode == v1.PersistentVolumeBlock {
		vol.Block = true
	}
	switch ps := &pv.Spec.PersistentVolumeSource; {
	case ps.CSI != nil:
		if ps.CSI.Driver == "" {
			return Volume{}, &FieldError{pvField + ".csi.driver", "required"}
		}
		if ps.CSI.VolumeHandle == "" {
			return Volume{}, &FieldError{pvField + ".csi.volumeHandle", "required"}
		}
		vol.Plugin, vol.CSI, vol.ForPod = PluginCSI, ps.CSI, pod.UID
		vol.ID = VolumeID(PluginCSI + "/" + ps.CSI.Driver + "^" + ps.CSI.VolumeHandle)
		vol.ReadOnly = vol.ReadOnly || ps.CSI.ReadOnly
	case ps.FC != nil:
		if ps.FC.Lun == nil && len(ps.FC.WWIDs) == 0 {
			return Volume{}, &FieldError{pvField + ".fc", "targetWWNs with lun, or wwids, required"}
		}
		var name string
		if len(ps.FC.TargetWWNs) > 0 && ps.FC.Lun != nil {
			name = fmt.Sprintf("%v:%d", ps.FC.TargetWWNs, *ps.FC.Lun)
		} else if len(ps.FC.WWIDs) > 0 {
			name = fmt.Sprintf("%v", ps.FC.WWIDs)
		} else {
			return Volume{}, &FieldError{pvField + ".fc.targetWWNs", "required with lun"}
		}
		vol.Plugin, vol.FC = PluginFC, ps.FC
		vol.ID = VolumeID(PluginFC + "/" + name)
		vol.ReadOnly = vol.ReadOnly || ps.FC.ReadOnly
	case ps.ISCSI != nil:
		if ps.ISCSI.TargetPortal == "" {
			return Volume{}, &FieldError{pvField + ".iscsi.targetPortal", "required"}
		}
		if ps.ISCSI.IQN == "" {
			return Volume{}, &FieldError{pvField + ".iscsi.iqn", "required"}
		}
		vol.Plugin, vol.ISCSI = PluginISCSI, ps.ISCSI
		vol.ID = VolumeID(fmt.Sprintf("%s/%s:%s:%d", PluginISCSI, ps.ISCSI.TargetPortal, ps.ISCSI.IQN, ps.ISCSI.Lun))
		vol.ReadOnly = vol.ReadOnly || ps.ISCSI.ReadOnly
	default:
		if name := firstSet(ps); name != "" {
			return Volume{}, &FieldError{pvField + "." + name, "unsupported volume source (want csi, fc or iscsi)"}
		}
		return Volume{}, &FieldError{pvField, "no volume source"}
	}
	return vol, nil
}

// inlineHandle is the volume handle of an inline CSI volume, generated as
// the kubelet generates it: "csi-" and the hex sha256 of the pod's UID and
// the volume's name.
func inlineHandle(uid types.UID, name string) string {
	sum := sha256.Sum256([]byte(string(uid) + name))
	return "csi-" + hex.EncodeToString(sum[:])
}
