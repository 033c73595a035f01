package volumeplugins

import (
	"context"
	"errors"
	"fmt"

	storagev1 "k8s.io/api/storage/v1"

	"github.com/podhost/podhost/host/supervisor"
	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/apivolumes"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	"github.com/podhost/podhost/pluginapi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// ErrNoVolumePlugin is wrapped by the error of an operation on a volume
// that no plugin of this host serves.
var ErrNoVolumePlugin = errors.New("no volume plugin serves the volume")

// Clients gives the volume client of a plugin by name.
type Clients interface {
	Volume(name string) (volumev1.VolumeClient, error)
}

// Capabilities gives the capabilities a plugin declared in GetInfo.
type Capabilities func(name string) ([]string, error)

// SupervisorClients are the volume clients of the plugins m runs.
func SupervisorClients(m *supervisor.Manager) Clients { return supervisorVolumes{m} }

// SupervisorCapabilities are the GetInfo capabilities of the plugins m runs.
func SupervisorCapabilities(m *supervisor.Manager) Capabilities {
	return func(name string) ([]string, error) {
		st, err := m.Status(name)
		return st.Capabilities, err
	}
}

// supervisorVolumes adapts the supervisor to Clients.
type supervisorVolumes struct{ m *supervisor.Manager }

func (s supervisorVolumes) Volume(name string) (volumev1.VolumeClient, error) {
	cc, err := s.m.Client(name)
	if err != nil {
		return nil, err
	}
	return volumev1.NewVolumeClient(cc), nil
}

// Config is what Plugins needs.
type Config struct {
	// Root is the host's root directory; Node the node's name (FC and
	// iSCSI Attach and Detach name it).
	Root string
	Node string
	// Host serves emptyDir and hostPath, API the volumes whose files come
	// from the API server.
	Host *hostvolumes.Host
	API  *apivolumes.Volumes
	// Specs are the plugins the supervisor runs; Clients and Capabilities
	// reach them.
	Specs        []supervisor.PluginSpec
	Clients      Clients
	Capabilities Capabilities
	// FSGroupPolicy is the fsGroupPolicy of a CSI driver (its CSIDriver
	// object's in Kubernetes mode); nil, or a driver without one, is the
	// API's default, ReadWriteOnceWithFSType.
	FSGroupPolicy func(ctx context.Context, driver string) (storagev1.FSGroupPolicy, error)
	// PodInfoOnMount tells whether a CSI driver asks for the pod's name,
	// namespace, UID and service account in each publish's volume context
	// (its CSIDriver object's podInfoOnMount, in Kubernetes mode); nil:
	// no driver says, and an inline volume's publish carries the
	// ephemeral flag and the pod's UID alone (csi.go, volumeContext).
	PodInfoOnMount func(ctx context.Context, driver string) (bool, error)
	// Secret reads the Secrets a CSI volume's source names
	// (nodeStageSecretRef, nodePublishSecretRef), whose data are the
	// secrets of the stage and the publish; nil fails such a volume.
	Secret SecretReader
}

// Plugins is the host's one adapter of every volume kind: it serves
// emptyDir and hostPath itself (Host) and projected, configMap and secret
// volumes from the API server (API), sends CSI volumes to the volume
// plugin serving their driver and FC and iSCSI volumes to the plugin
// that declares it serves them, and fails any other volume with
// ErrNoVolumePlugin. It is the volume manager's Plugins, Reconstructor
// and MetricsPlugins.
type Plugins struct {
	host *hostvolumes.Host
	api  *apivolumes.Volumes
	csi  *csiVolumes
	scsi *scsiVolumes
	caps Capabilities
}

// New builds Plugins. It fails when two plugins' configs list one CSI
// driver, or two running plugins declare the same SCSI kind or
// volume.csi.registration.
func New(cfg Config) (*Plugins, error) {
	routes, err := csiDriverRoutes(cfg.Specs)
	if err != nil {
		return nil, err
	}
	s := &scsiVolumes{root: cfg.Root, node: cfg.Node, host: cfg.Host, clients: cfg.Clients, caps: cfg.Capabilities}
	for _, spec := range cfg.Specs {
		if spec.Kind == pluginapi.KindVolume {
			s.plugins = append(s.plugins, spec.Name)
		}
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	c := &csiVolumes{
		root: cfg.Root, host: cfg.Host, clients: cfg.Clients, routes: routes, plugins: s.plugins, caps: cfg.Capabilities,
		policy: cfg.FSGroupPolicy, podInfo: cfg.PodInfoOnMount, secret: cfg.Secret,
	}
	if _, err := c.registrationPlugin(); errors.Is(err, ErrVolumePluginConflict) {
		return nil, err
	}
	return &Plugins{host: cfg.Host, api: cfg.API, scsi: s, caps: cfg.Capabilities, csi: c}, nil
}

// deviceOps are the operations of a volume plugin's volumes.
type deviceOps interface {
	Stage(context.Context, volumemanager.Volume) error
	Unstage(context.Context, volumemanager.Volume) error
	Publish(context.Context, volumemanager.PodVolume) error
	Unpublish(context.Context, volumemanager.PodVolume) error
	Map(context.Context, volumemanager.PodVolume) error
	Unmap(context.Context, volumemanager.PodVolume) error
}

// ops is what runs the operations of v's plugin.
func (p *Plugins) ops(v volumemanager.Volume) (deviceOps, error) {
	switch v.Plugin {
	case volumemanager.PluginCSI:
		if p.csi != nil {
			return p.csi, nil
		}
	case volumemanager.PluginFC, volumemanager.PluginISCSI:
		if p.scsi != nil {
			return p.scsi, nil
		}
	}
	return nil, noPlugin(v)
}

func (p *Plugins) Stage(ctx context.Context, v volumemanager.Volume) error {
	ops, err := p.ops(v)
	if err != nil {
		return err
	}
	return ops.Stage(ctx, v)
}

func (p *Plugins) Unstage(ctx context.Context, v volumemanager.Volume) error {
	ops, err := p.ops(v)
	if err != nil {
		return err
	}
	return ops.Unstage(ctx, v)
}

func (p *Plugins) Publish(ctx context.Context, pv volumemanager.PodVolume) error {
	if apivolumes.Serves(pv.Volume.Plugin) {
		return p.api.Publish(ctx, pv)
	}
	if hostvolumes.Serves(pv.Volume.Plugin) {
		return p.host.Publish(ctx, pv)
	}
	ops, err := p.ops(pv.Volume)
	if err != nil {
		return err
	}
	return ops.Publish(ctx, pv)
}

// Unpublish unmounts and removes the volume's subPath mounts of the
// pod's containers (hostvolumes.CleanSubPaths), whatever its kind, as the
// kubelet does before it tears a volume down, then unpublishes it.
func (p *Plugins) Unpublish(ctx context.Context, pv volumemanager.PodVolume) error {
	if err := p.host.CleanSubPaths(pv.Pod, pv.Name); err != nil {
		return err
	}
	if apivolumes.Serves(pv.Volume.Plugin) {
		return p.api.Unpublish(ctx, pv)
	}
	if hostvolumes.Serves(pv.Volume.Plugin) {
		return p.host.Unpublish(ctx, pv)
	}
	ops, err := p.ops(pv.Volume)
	if err != nil {
		return err
	}
	return ops.Unpublish(ctx, pv)
}

func (p *Plugins) Map(ctx context.Context, pv volumemanager.PodVolume) error {
	ops, err := p.ops(pv.Volume)
	if err != nil {
		return err
	}
	return ops.Map(ctx, pv)
}

func (p *Plugins) Unmap(ctx context.Context, pv volumemanager.PodVolume) error {
	ops, err := p.ops(pv.Volume)
	if err != nil {
		return err
	}
	return ops.Unmap(ctx, pv)
}

func noPlugin(v volumemanager.Volume) error {
	what := v.Plugin
	if v.CSI != nil {
		what = fmt.Sprintf("csi driver %q", v.CSI.Driver)
	}
	if v.Block {
		what += " (block)"
	}
	return fmt.Errorf("%w: %s", ErrNoVolumePlugin, what)
}

var (
	_ volumemanager.Plugins        = (*Plugins)(nil)
	_ volumemanager.Reconstructor  = (*Plugins)(nil)
	_ volumemanager.MetricsPlugins = (*Plugins)(nil)
)
