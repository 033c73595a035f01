package volumeplugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	storagev1 "k8s.io/api/storage/v1"

	"github.com/podhost/podhost/host/supervisor"
	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	"github.com/podhost/podhost/pluginapi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// csiDriverRoutes maps each CSI driver to the volume plugin that serves
// it: the drivers a volume plugin's config lists under drivers[].name
// (volume-csi's config). A driver listed by two plugins is an error
// naming both; a config without a drivers list serves none.
func csiDriverRoutes(specs []supervisor.PluginSpec) (map[string]string, error) {
	routes := map[string]string{}
	for _, s := range specs {
		if s.Kind != pluginapi.KindVolume || len(s.Config) == 0 {
			continue
		}
		var cfg struct {
			Drivers []struct {
				Name string `json:"name"`
			} `json:"drivers"`
		}
		if err := json.Unmarshal(s.Config, &cfg); err != nil {
			continue // not a CSI plugin's config; the plugin judges its own
		}
		for _, d := range cfg.Drivers {
			if other, dup := routes[d.Name]; dup && d.Name != "" {
				return nil, fmt.Errorf("plugins %q and %q both list csi driver %q in config.drivers", other, s.Name, d.Name)
			}
			if d.Name != "" {
				routes[d.Name] = s.Name
			}
		}
	}
	return routes, nil
}

// csiVolumes runs the operations of CSI volumes on the volume plugin that
// serves each driver.
type csiVolumes struct {
	root    string
	host    *hostvolumes.Host
	clients Clients
	routes  map[string]string // csi driver → plugin, from the configs
	plugins []string          // the volume plugins of the host
	caps    Capabilities
	policy  func(ctx context.Context, driver string) (storagev1.FSGroupPolicy, error)
	podInfo func(ctx context.Context, driver string) (bool, error)
	secret  SecretReader // nil: a volume that names a Secret fails
}

// client is the plugin serving v's driver.
func (c *csiVolumes) client(v volumemanager.Volume) (string, volumev1.VolumeClient, error) {
	if v.CSI == nil {
		return "", nil, noPlugin(v)
	}
	name, ok := c.route(v.CSI.Driver)
	if !ok {
		return "", nil, noPlugin(v)
	}
	cl, err := c.clients.Volume(name)
	if err != nil {
		return "", nil, fmt.Errorf("%w: plugin %s: %w", ErrNoVolumePlugin, name, err)
	}
	return name, cl, nil
}

// stagingPath is the node-wide staging directory of a shared CSI volume:
// <root>/plugins/kubernetes.io~csi/<driver>/<sha256 of the handle>/globalmount.
func (c *csiVolumes) stagingPath(v volumemanager.Volume) string {
	if !v.Shared || v.CSI == nil {
		return ""
	}
	sum := sha256.Sum256([]byte(v.CSI.VolumeHandle))
	return filepath.Join(c.root, "plugins", "kubernetes.io~csi", v.CSI.Driver, hex.EncodeToString(sum[:]), "globalmount")
}

// capability is a CSI volume's capability for Stage and Publish alike:
// the access mode of the volume itself (its PersistentVolume's, or the
// inline source's readOnly), never of the pod that comes first, whose
// read-only claim is Publish's readonly flag.
func capability(v volumemanager.Volume) *volumev1.Capability {
	v.ReadOnly = v.CSI.ReadOnly
	return accessCapability(v, v.CSI.FSType)
}

// accessCapability is v's access mode, and a raw block access type or a
// mount of fsType with the PersistentVolume's mount options.
func accessCapability(v volumemanager.Volume, fsType string) *volumev1.Capability {
	mode := volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_WRITER
	if v.ReadOnly {
		mode = volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_READER_ONLY
	}
	c := &volumev1.Capability{AccessMode: mode}
	if v.Block {
		c.AccessType = &volumev1.Capability_Block{Block: &volumev1.Capability_BlockVolume{}}
	} else {
		c.AccessType = &volumev1.Capability_Mount{Mount: &volumev1.Capability_MountVolume{FsType: fsType, MountFlags: v.MountOptions}}
	}
	return c
}

// volumeContext is the CSI volume context of a stage (pv.Pod empty) or a
// publish. A publish of a driver that asks for the pod's information
// (podInfo true) carries it as the kubelet's does: the pod's name,
// namespace, UID and service account, and whether the volume is an
// inline ephemeral one. Without a CSIDriver to ask (podInfo nil, outside
// Kubernetes mode) an inline volume's publish says it is ephemeral and
// whose it is, which drivers serving inline volumes rely on.
func volumeContext(pv volumemanager.PodVolume, podInfo *bool) map[string]string {
	out := map[string]string{}
	for k, val := range pv.Volume.CSI.VolumeAttributes {
		out[k] = val
	}
	if pv.Pod == "" {
		return out
	}
	ephemeral := pv.Volume.PV == ""
	switch {
	case podInfo != nil && *podInfo:
		p := pv.Args.Pod
		out["csi.storage.k8s.io/pod.name"] = p.Name
		out["csi.storage.k8s.io/pod.namespace"] = p.Namespace
		out["csi.storage.k8s.io/pod.uid"] = string(pv.Pod)
		out["csi.storage.k8s.io/serviceAccount.name"] = p.ServiceAccount
		out["csi.storage.k8s.io/ephemeral"] = strconv.FormatBool(ephemeral)
	case podInfo == nil && ephemeral:
		out["csi.storage.k8s.io/ephemeral"] = "true"
		out["csi.storage.k8s.io/pod.uid"] = string(pv.Pod)
	}
	return out
}

// publishContext is pv's volume context for NodePublish, asking the
// driver's CSIDriver whether it wants the pod's information.
func (c *csiVolumes) publishContext(ctx context.Context, pv volumemanager.PodVolume) (map[string]string, error) {
	if c.podInfo == nil {
		return volumeContext(pv, nil), nil
	}
	want, err := c.podInfo(ctx, pv.Volume.CSI.Driver)
	if err != nil {
		// Nothing was asked of the driver yet: no state changes.
		return nil, &classifiedError{class: volumemanager.Transient, err: fmt.Errorf("the podInfoOnMount of CSI driver %s: %w", pv.Volume.CSI.Driver, err)}
	}
	return volumeContext(pv, &want), nil
}

func (c *csiVolumes) Stage(ctx context.Context, v volumemanager.Volume) error {
	name, cl, err := c.client(v)
	if err != nil {
		return err
	}
	secrets, err := c.nodeSecrets(ctx, "NodeStageSecretRef", v.ForPod, v.CSI.NodeStageSecretRef)
	if err != nil {
		return err
	}
	path := c.stagingPath(v)
	if err := os.MkdirAll(path, 0o750); err != nil {
		return fmt.Errorf("creating staging path: %w", err)
	}
	_, err = cl.Stage(ctx, &volumev1.StageRequest{
		VolumeId: v.CSI.VolumeHandle, PublishContext: v.PublishContext, StagingPath: path, Capability: capability(v),
		VolumeContext: volumeContext(volumemanager.PodVolume{Volume: v}, nil), Driver: v.CSI.Driver, Secrets: secrets,
	})
	return edgeError(name, "Stage", err)
}

func (c *csiVolumes) Unstage(ctx context.Context, v volumemanager.Volume) error {
	name, cl, err := c.client(v)
	if err != nil {
		return err
	}
	path := c.stagingPath(v)
	_, err = cl.Unstage(ctx, &volumev1.UnstageRequest{VolumeId: v.CSI.VolumeHandle, StagingPath: path, Driver: v.CSI.Driver})
	if err = edgeError(name, "Unstage", err); err != nil {
		return err
	}
	// The empty globalmount, then <sha>/ and <driver>/ once empty; a
	// directory that is not empty (a mount left, another volume) stays.
	for d := path; d != filepath.Join(c.root, "plugins", "kubernetes.io~csi"); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
	return nil
}

func (c *csiVolumes) Publish(ctx context.Context, pv volumemanager.PodVolume) error {
	name, cl, err := c.client(pv.Volume)
	if err != nil {
		return err
	}
	target := c.host.TargetPath(pv)
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return fmt.Errorf("creating the target's directory: %w", err)
	}
	vctx, err := c.publishContext(ctx, pv)
	if err != nil {
		return err
	}
	secrets, err := c.nodeSecrets(ctx, "NodePublishSecretRef", pv.Pod, pv.Volume.CSI.NodePublishSecretRef)
	if err != nil {
		return err
	}
	if err := writeCSIData(c.root, pv); err != nil {
		return err
	}
	_, err = cl.Publish(ctx, &volumev1.PublishRequest{
		VolumeId: pv.Volume.CSI.VolumeHandle, PublishContext: pv.Volume.PublishContext, StagingPath: c.stagingPath(pv.Volume), TargetPath: target,
		Capability: capability(pv.Volume), Readonly: pv.Volume.ReadOnly, VolumeContext: vctx, Driver: pv.Volume.CSI.Driver, Secrets: secrets,
	})
	if err := edgeError(name, "Publish", err); err != nil {
		return err
	}
	return c.giveToFSGroup(ctx, target, pv)
}

func (c *csiVolumes) Unpublish(ctx context.Context, pv volumemanager.PodVolume) error {
	name, cl, err := c.client(pv.Volume)
	if err != nil {
		return err
	}
	target := c.host.TargetPath(pv)
	_, err = cl.Unpublish(ctx, &volumev1.UnpublishRequest{VolumeId: pv.Volume.CSI.VolumeHandle, TargetPath: target, Driver: pv.Volume.CSI.Driver})
	if err = edgeError(name, "Unpublish", err); err != nil {
		return err
	}
	if err := removeCSIData(c.root, pv.Pod, pv.Name); err != nil {
		return err
	}
	return hostvolumes.RemovePodVolumeDir(c.root, pv.Pod, pv.Volume.Plugin, pv.Name)
}

// Map maps a raw block CSI volume on the pod's device file (CSI
// NodePublishVolume with a block capability).
func (c *csiVolumes) Map(ctx context.Context, pv volumemanager.PodVolume) error {
	name, cl, err := c.client(pv.Volume)
	if err != nil {
		return err
	}
	target := c.host.DevicePath(pv)
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return fmt.Errorf("creating the device file's directory: %w", err)
	}
	vctx, err := c.publishContext(ctx, pv)
	if err != nil {
		return err
	}
	secrets, err := c.nodeSecrets(ctx, "NodePublishSecretRef", pv.Pod, pv.Volume.CSI.NodePublishSecretRef)
	if err != nil {
		return err
	}
	_, err = cl.MapBlock(ctx, &volumev1.MapBlockRequest{
		VolumeId: pv.Volume.CSI.VolumeHandle, PublishContext: pv.Volume.PublishContext, StagingPath: c.stagingPath(pv.Volume), TargetPath: target,
		Capability: capability(pv.Volume), Readonly: pv.Volume.ReadOnly, VolumeContext: vctx, Driver: pv.Volume.CSI.Driver, Secrets: secrets,
	})
	return edgeError(name, "MapBlock", err)
}

// Unmap undoes Map and removes the pod's device file.
func (c *csiVolumes) Unmap(ctx context.Context, pv volumemanager.PodVolume) error {
	name, cl, err := c.client(pv.Volume)
	if err != nil {
		return err
	}
	target := c.host.DevicePath(pv)
	_, err = cl.UnmapBlock(ctx, &volumev1.UnmapBlockRequest{VolumeId: pv.Volume.CSI.VolumeHandle, TargetPath: target, Driver: pv.Volume.CSI.Driver})
	if err = edgeError(name, "UnmapBlock", err); err != nil {
		return err
	}
	return hostvolumes.RemovePodDevice(c.root, pv.Pod, pv.Volume.Plugin, pv.Name)
}
