package volumeplugins

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	"github.com/podhost/podhost/pluginapi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// scsiKinds is the GetInfo capability a plugin declares to serve each of
// the host's in-tree SCSI volume plugins.
var scsiKinds = map[string]string{
	volumemanager.PluginFC:    pluginapi.CapVolumeFC,
	volumemanager.PluginISCSI: pluginapi.CapVolumeISCSI,
}

// ErrVolumePluginConflict is wrapped by the error of a volume that two
// plugins declare they serve.
var ErrVolumePluginConflict = errors.New("more than one volume plugin serves the volume")

// scsiVolumes runs the operations of FC and iSCSI volumes on the volume
// plugin that declares volume.fc or volume.iscsi in GetInfo: Attach first
// when its GetCapabilities asks for it, Stage, then Publish (filesystem)
// or MapBlock (volumeMode: Block); UnmapBlock or Unpublish, Unstage and
// Detach to tear down.
type scsiVolumes struct {
	root    string
	node    string
	host    *hostvolumes.Host
	clients Clients
	plugins []string // the volume plugins of the host
	caps    Capabilities
}

// check fails when two running plugins declare the same kind; a plugin
// not running is left out (its calls fail until it runs).
func (s *scsiVolumes) check() error {
	for _, kind := range []string{volumemanager.PluginFC, volumemanager.PluginISCSI} {
		if _, err := s.route(kind); errors.Is(err, ErrVolumePluginConflict) {
			return err
		}
	}
	return nil
}

// route is the plugin that declares it serves kind: exactly one may.
func (s *scsiVolumes) route(kind string) (string, error) {
	want := scsiKinds[kind]
	var found []string
	for _, name := range s.plugins {
		if caps, err := s.caps(name); err == nil && slices.Contains(caps, want) {
			found = append(found, name)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: %s (no plugin declares %s)", ErrNoVolumePlugin, kind, want)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%w: plugins %q and %q both declare %s", ErrVolumePluginConflict, found[0], found[1], want)
}

// client is the plugin serving v and its capabilities.
func (s *scsiVolumes) client(ctx context.Context, v volumemanager.Volume) (string, volumev1.VolumeClient, *volumev1.GetCapabilitiesResponse, error) {
	name, err := s.route(v.Plugin)
	if err != nil {
		return "", nil, nil, err
	}
	cl, err := s.clients.Volume(name)
	if err != nil {
		return "", nil, nil, fmt.Errorf("%w: plugin %s: %w", ErrNoVolumePlugin, name, err)
	}
	caps, err := cl.GetCapabilities(ctx, &volumev1.GetCapabilitiesRequest{})
	if err != nil {
		return "", nil, nil, transientError(name, "GetCapabilities", err)
	}
	if v.Block && !caps.GetBlock() {
		return "", nil, nil, fmt.Errorf("%w: plugin %s maps no raw block volumes", ErrNoVolumePlugin, name)
	}
	return name, cl, caps, nil
}

func (s *scsiVolumes) Stage(ctx context.Context, v volumemanager.Volume) error {
	vc, err := scsiContext(v)
	if err != nil {
		return err
	}
	name, cl, caps, err := s.client(ctx, v)
	if err != nil {
		return err
	}
	path, err := s.stagingPath(v)
	if err != nil {
		return err
	}
	var pc map[string]string
	if caps.GetRequiresAttach() {
		resp, err := cl.Attach(ctx, &volumev1.AttachRequest{VolumeId: string(v.ID), NodeId: s.node, Readonly: v.ReadOnly, VolumeContext: vc})
		if err = edgeError(name, "Attach", err); err != nil {
			return err
		}
		pc = resp.GetPublishContext()
	}
	if !caps.GetStageUnstage() {
		return nil
	}
	if err := os.MkdirAll(path, 0o750); err != nil {
		return fmt.Errorf("creating staging path: %w", err)
	}
	_, err = cl.Stage(ctx, &volumev1.StageRequest{
		VolumeId: string(v.ID), PublishContext: pc, StagingPath: path, Capability: scsiCapability(v),
		VolumeContext: vc, SecretsDir: s.secretsDir(v),
	})
	return edgeError(name, "Stage", err)
}

func (s *scsiVolumes) Unstage(ctx context.Context, v volumemanager.Volume) error {
	vc, err := scsiContext(v)
	if err != nil {
		return err
	}
	name, cl, caps, err := s.client(ctx, v)
	if err != nil {
		return err
	}
	path, err := s.stagingPath(v)
	if err != nil {
		return err
	}
	if caps.GetStageUnstage() {
		_, err = cl.Unstage(ctx, &volumev1.UnstageRequest{VolumeId: string(v.ID), StagingPath: path})
		if err = edgeError(name, "Unstage", err); err != nil {
			return err
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing staging path: %w", err)
		}
	}
	if caps.GetRequiresAttach() {
		_, err = cl.Detach(ctx, &volumev1.DetachRequest{VolumeId: string(v.ID), NodeId: s.node, VolumeContext: vc})
		return edgeError(name, "Detach", err)
	}
	return nil
}

func (s *scsiVolumes) Publish(ctx context.Context, pv volumemanager.PodVolume) error {
	name, cl, vc, staging, err := s.podCall(ctx, pv.Volume)
	if err != nil {
		return err
	}
	target := s.host.TargetPath(pv)
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return fmt.Errorf("creating the target's directory: %w", err)
	}
	_, err = cl.Publish(ctx, &volumev1.PublishRequest{
		VolumeId: string(pv.Volume.ID), StagingPath: staging, TargetPath: target, Capability: scsiCapability(pv.Volume),
		Readonly: pv.Volume.ReadOnly, VolumeContext: vc, SecretsDir: s.secretsDir(pv.Volume),
	})
	if err := edgeError(name, "Publish", err); err != nil {
		return err
	}
	return giveToFSGroup(target, pv)
}

func (s *scsiVolumes) Unpublish(ctx context.Context, pv volumemanager.PodVolume) error {
	name, cl, _, err := s.client(ctx, pv.Volume)
	if err != nil {
		return err
	}
	_, err = cl.Unpublish(ctx, &volumev1.UnpublishRequest{VolumeId: string(pv.Volume.ID), TargetPath: s.host.TargetPath(pv)})
	if err = edgeError(name, "Unpublish", err); err != nil {
		return err
	}
	return hostvolumes.RemovePodVolumeDir(s.root, pv.Pod, pv.Volume.Plugin, pv.Name)
}

func (s *scsiVolumes) Map(ctx context.Context, pv volumemanager.PodVolume) error {
	name, cl, vc, staging, err := s.podCall(ctx, pv.Volume)
	if err != nil {
		return err
	}
	_, err = cl.MapBlock(ctx, &volumev1.MapBlockRequest{
		VolumeId: string(pv.Volume.ID), StagingPath: staging, TargetPath: s.host.DevicePath(pv),
		Readonly: pv.Volume.ReadOnly, VolumeContext: vc, Capability: scsiCapability(pv.Volume), SecretsDir: s.secretsDir(pv.Volume),
	})
	return edgeError(name, "MapBlock", err)
}

func (s *scsiVolumes) Unmap(ctx context.Context, pv volumemanager.PodVolume) error {
	name, cl, _, err := s.client(ctx, pv.Volume)
	if err != nil {
		return err
	}
	_, err = cl.UnmapBlock(ctx, &volumev1.UnmapBlockRequest{VolumeId: string(pv.Volume.ID), TargetPath: s.host.DevicePath(pv)})
	if err = edgeError(name, "UnmapBlock", err); err != nil {
		return err
	}
	return hostvolumes.RemovePodDevice(s.root, pv.Pod, pv.Volume.Plugin, pv.Name)
}

// podCall is what Publish and MapBlock need: the plugin, v's volume
// context and its staging path, empty for a plugin that does not stage.
func (s *scsiVolumes) podCall(ctx context.Context, v volumemanager.Volume) (name string, cl volumev1.VolumeClient, vc map[string]string, staging string, err error) {
	name, cl, caps, err := s.client(ctx, v)
	if err != nil {
		return "", nil, nil, "", err
	}
	if vc, err = scsiContext(v); err != nil {
		return "", nil, nil, "", err
	}
	if caps.GetStageUnstage() {
		if staging, err = s.stagingPath(v); err != nil {
			return "", nil, nil, "", err
		}
	}
	return name, cl, vc, staging, nil
}

// stagingPath is the node-wide staging directory of an FC or iSCSI
// volume, named as the kubelet names its global mount (and its global
// map directory under volumeDevices/ for a block volume):
// <root>/plugins/kubernetes.io~fc/<wwn>-<wwn>-lun-<lun> or .../<wwid>-<wwid>,
// <root>/plugins/kubernetes.io~iscsi/iface-<iface>/<portal>-<iqn>-lun-<lun>.
func (s *scsiVolumes) stagingPath(v volumemanager.Volume) (string, error) {
	var parts []string
	switch {
	case v.FC != nil && len(v.FC.TargetWWNs) > 0 && v.FC.Lun != nil:
		parts = []string{fmt.Sprintf("%s-lun-%d", strings.Join(v.FC.TargetWWNs, "-"), *v.FC.Lun)}
	case v.FC != nil:
		parts = []string{strings.Join(v.FC.WWIDs, "-")}
	case v.ISCSI != nil:
		parts = []string{"iface-" + iscsiIface(v), fmt.Sprintf("%s-%s-lun-%d", v.ISCSI.TargetPortal, v.ISCSI.IQN, v.ISCSI.Lun)}
	default:
		return "", noPlugin(v)
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "/\x00") {
			return "", &volumemanager.FieldError{Field: "persistentVolume " + v.PV + " spec." + sourceName(v), Detail: fmt.Sprintf("%q cannot name a directory", p)}
		}
	}
	dir := filepath.Join(s.root, "plugins", strings.ReplaceAll(v.Plugin, "/", "~"))
	if v.Block {
		dir = filepath.Join(dir, "volumeDevices")
	}
	return filepath.Join(append([]string{dir}, parts...)...), nil
}

// secretsDir is the directory of the iSCSI PersistentVolume's secretRef:
// <root>/secrets/<namespace>/<name>, one file per key, namespace
// "default" when the reference names none. Empty without a secretRef.
func (s *scsiVolumes) secretsDir(v volumemanager.Volume) string {
	if v.ISCSI == nil || v.ISCSI.SecretRef == nil || v.ISCSI.SecretRef.Name == "" {
		return ""
	}
	ns := v.ISCSI.SecretRef.Namespace
	if ns == "" {
		ns = "default"
	}
	return filepath.Join(s.root, "secrets", ns, v.ISCSI.SecretRef.Name)
}

func iscsiIface(v volumemanager.Volume) string {
	if v.ISCSI.ISCSIInterface == "" {
		return "default"
	}
	return v.ISCSI.ISCSIInterface
}

func sourceName(v volumemanager.Volume) string {
	if v.FC != nil {
		return "fc"
	}
	return "iscsi"
}

// scsiContext is the volume context the FC and iSCSI plugins read, from
// the PersistentVolume's source (keys named as the source's fields).
func scsiContext(v volumemanager.Volume) (map[string]string, error) {
	switch {
	case v.FC != nil:
		vc := map[string]string{"targetWWNs": strings.Join(v.FC.TargetWWNs, ","), "wwids": strings.Join(v.FC.WWIDs, ",")}
		if v.FC.Lun != nil {
			vc["lun"] = strconv.Itoa(int(*v.FC.Lun))
		}
		return vc, nil
	case v.ISCSI != nil:
		src := v.ISCSI
		if src.InitiatorName != nil && *src.InitiatorName != "" {
			return nil, &volumemanager.FieldError{Field: "persistentVolume " + v.PV + " spec.iscsi.initiatorName", Detail: "not supported (the iface's initiator name is used)"}
		}
		vc := map[string]string{
			"targetPortal": src.TargetPortal, "iqn": src.IQN, "lun": strconv.Itoa(int(src.Lun)),
			"iscsiInterface": iscsiIface(v), "portals": strings.Join(src.Portals, ","),
		}
		if src.DiscoveryCHAPAuth {
			vc["chapAuthDiscovery"] = "true"
		}
		if src.SessionCHAPAuth {
			vc["chapAuthSession"] = "true"
		}
		return vc, nil
	}
	return nil, noPlugin(v)
}

// scsiCapability is the access type and mode of an FC or iSCSI volume.
func scsiCapability(v volumemanager.Volume) *volumev1.Capability {
	if v.FC != nil {
		return accessCapability(v, v.FC.FSType)
	}
	return accessCapability(v, v.ISCSI.FSType)
}
