package node

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/apivolumes"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// volumeReconstructor rebuilds the pod volume directories found after a
// restart: FC and iSCSI ones through their plugin's Reconstruct, the
// host's own (emptyDir) itself.
type volumeReconstructor struct {
	host *hostvolumes.Host
	scsi *scsiVolumes
}

func (r volumeReconstructor) Reconstruct(ctx context.Context, dir volumemanager.PodVolumeDir) (volumemanager.Reconstructed, error) {
	if _, ok := scsiKinds[dir.Plugin]; ok {
		return r.scsi.Reconstruct(ctx, dir)
	}
	if apivolumes.Serves(dir.Plugin) {
		return reconstructAPIVolume(dir), nil
	}
	return r.host.Reconstruct(ctx, dir)
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

// reconstructionMetrics are podhost_volume_reconstruction_failures_total
// {plugin} and podhost_volume_unresolved (the pod volume directories
// standing as unresolved placeholders, in use until rebuilt).
type reconstructionMetrics struct{ failures *prometheus.CounterVec }

func newReconstructionMetrics(reg prometheus.Registerer) (reconstructionMetrics, error) {
	m := reconstructionMetrics{failures: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "podhost_volume_reconstruction_failures_total",
		Help: "Failed reconstructions (and retries) of pod volume directories after a host restart, by volume plugin.",
	}, []string{"plugin"})}
	return m, reg.Register(m.failures)
}

func (m reconstructionMetrics) ReconstructionFailed(plugin string) {
	m.failures.WithLabelValues(plugin).Inc()
}

// watch registers the gauge of the unresolved placeholders of vm.
func (m reconstructionMetrics) watch(reg prometheus.Registerer, vm *volumemanager.Manager) error {
	return reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "podhost_volume_unresolved",
		Help: "Pod volume directories whose reconstruction has not succeeded yet; their volumes stay in use.",
	}, func() float64 { return float64(len(vm.Unresolved())) }))
}
