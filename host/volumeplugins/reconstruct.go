package volumeplugins

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/apivolumes"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// Reconstruct rebuilds a pod volume directory found after a restart: CSI,
// FC and iSCSI ones through their plugin's Reconstruct, the host's own
// (emptyDir) itself, and those of the API server's volumes as uncertain.
func (p *Plugins) Reconstruct(ctx context.Context, dir volumemanager.PodVolumeDir) (volumemanager.Reconstructed, error) {
	if _, ok := scsiKinds[dir.Plugin]; ok && p.scsi != nil {
		return p.scsi.Reconstruct(ctx, dir)
	}
	if dir.Plugin == volumemanager.PluginCSI && p.csi != nil {
		return p.csi.Reconstruct(ctx, dir)
	}
	if apivolumes.Serves(dir.Plugin) {
		return reconstructAPIVolume(dir), nil
	}
	return p.host.Reconstruct(ctx, dir)
}

// reconstructAPIVolume rebuilds such a volume's directory found after a
// restart as uncertain: the pod's next sync writes it again, and it keeps
// being refreshed; a pod that is gone has it removed.
func reconstructAPIVolume(dir volumemanager.PodVolumeDir) volumemanager.Reconstructed {
	return volumemanager.Reconstructed{Volume: volumemanager.Volume{
		ID:     volumemanager.VolumeID(dir.Plugin + "/" + string(dir.Pod) + "-" + dir.Name),
		Plugin: dir.Plugin, ReadOnly: true,
	}}
}

// Reconstruct asks the plugin serving dir's kind what is mounted at the
// directory's target (its mount directory, or its device file for a
// block volume) and rebuilds the volume from the plugin's record: the
// volume context gives the source, which must name the same volume and
// staging path the plugin recorded. Nothing found at a target that is no
// mount point is volumemanager.ErrNotMounted; nothing found at a mount
// point is an error (something unknown is mounted there).
func (s *scsiVolumes) Reconstruct(ctx context.Context, dir volumemanager.PodVolumeDir) (volumemanager.Reconstructed, error) {
	var none volumemanager.Reconstructed
	pv := volumemanager.PodVolume{Pod: dir.Pod, Name: dir.Name, Volume: volumemanager.Volume{Plugin: dir.Plugin, Block: dir.Block}}
	name, cl, caps, err := s.client(ctx, pv.Volume)
	if err != nil {
		return none, err
	}
	if !caps.GetReconstruction() {
		return none, fmt.Errorf("plugin %s does not reconstruct volumes (GetCapabilities reconstruction)", name)
	}
	target := s.host.VolumePath(pv)
	resp, err := cl.Reconstruct(ctx, &volumev1.ReconstructRequest{TargetPath: target})
	if err = edgeError(name, "Reconstruct", err); err != nil {
		return none, err
	}
	if !resp.GetFound() {
		mounted, err := s.host.Mounted(target)
		if err != nil {
			return none, fmt.Errorf("plugin %s found no volume at %s: %w", name, target, err)
		}
		if !mounted {
			return none, fmt.Errorf("plugin %s at %s: %w", name, target, volumemanager.ErrNotMounted)
		}
		return none, fmt.Errorf("plugin %s knows no volume mounted at %s", name, target)
	}
	v, err := scsiVolumeOf(ctx, dir, resp)
	if err != nil {
		return none, fmt.Errorf("plugin %s: volume %s: %w", name, resp.GetVolumeId(), err)
	}
	if string(v.ID) != resp.GetVolumeId() {
		return none, fmt.Errorf("plugin %s: volume id %q disagrees with its volume context (%s)", name, resp.GetVolumeId(), v.ID)
	}
	if staging, err := s.stagingPath(v); err != nil || staging != resp.GetStagingPath() {
		return none, fmt.Errorf("plugin %s: volume %s: staging path %q disagrees with the host's %q (%v)", name, v.ID, resp.GetStagingPath(), staging, err)
	}
	return volumemanager.Reconstructed{Volume: v, Published: true, Staged: true}, nil
}

// scsiVolumeOf is the volume a Reconstruct answer describes: the source
// from the volume context (the inverse of scsiContext), the fsType and
// access mode from the capability, named as the desired state names it.
func scsiVolumeOf(ctx context.Context, dir volumemanager.PodVolumeDir, resp *volumev1.ReconstructResponse) (volumemanager.Volume, error) {
	vc, c := resp.GetVolumeContext(), resp.GetCapability()
	fsType := c.GetMount().GetFsType()
	readOnly := c.GetAccessMode() == volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_READER_ONLY
	var src v1.PersistentVolumeSource
	switch dir.Plugin {
	case volumemanager.PluginFC:
		fc := &v1.FCVolumeSource{TargetWWNs: splitList(vc["targetWWNs"]), WWIDs: splitList(vc["wwids"]), FSType: fsType, ReadOnly: readOnly}
		if s, ok := vc["lun"]; ok {
			lun, err := strconv.Atoi(s)
			if err != nil {
				return volumemanager.Volume{}, fmt.Errorf("volume context lun: %w", err)
			}
			l := int32(lun)
			fc.Lun = &l
		}
		src.FC = fc
	case volumemanager.PluginISCSI:
		lun, err := strconv.Atoi(vc["lun"])
		if err != nil {
			return volumemanager.Volume{}, fmt.Errorf("volume context lun: %w", err)
		}
		src.ISCSI = &v1.ISCSIPersistentVolumeSource{
			TargetPortal: vc["targetPortal"], IQN: vc["iqn"], Lun: int32(lun), ISCSIInterface: vc["iscsiInterface"],
			Portals: splitList(vc["portals"]), DiscoveryCHAPAuth: vc["chapAuthDiscovery"] == "true",
			SessionCHAPAuth: vc["chapAuthSession"] == "true", FSType: fsType, ReadOnly: readOnly,
		}
	}
	mode := v1.PersistentVolumeFilesystem
	if dir.Block {
		mode = v1.PersistentVolumeBlock
	}
	pv := &v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: src, VolumeMode: &mode}}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: dir.Pod}, Spec: v1.PodSpec{Volumes: []v1.Volume{{
		Name: dir.Name, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: dir.Name}},
	}}}}
	vols, err := volumemanager.DesiredVolumes(ctx, pod, fixedClaim{pv})
	if err != nil {
		return volumemanager.Volume{}, err
	}
	return vols[0].Volume, nil
}

// fixedClaim resolves every claim to pv.
type fixedClaim struct{ pv *v1.PersistentVolume }

func (f fixedClaim) PersistentVolume(context.Context, *v1.Pod, string) (*v1.PersistentVolumeClaim, *v1.PersistentVolume, error) {
	return nil, f.pv, nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
