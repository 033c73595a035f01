package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/events"
	"github.com/podhost/podhost/host/state"
	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/apivolumes"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// mountTimeout bounds one wait of a pod sync for its volumes, as the
// kubelet's: the sync then fails and the pod worker retries, while the
// volume manager keeps trying in the background.
const mountTimeout = 2*time.Minute + 3*time.Second

// ErrNoVolumePlugin is wrapped by the error of an operation on a volume
// that no plugin of this host serves.
var ErrNoVolumePlugin = errors.New("no volume plugin serves the volume")

// volumePlugins is the volume manager's Plugins: the host serves emptyDir
// and hostPath itself, and projected, configMap and secret volumes from
// the API server (host/volumemanager/apivolumes), CSI volumes go to the volume plugin serving their
// driver, FC and iSCSI volumes to the plugin that declares it serves
// them, and any other volume fails with ErrNoVolumePlugin.
type volumePlugins struct {
	host *hostvolumes.Host
	api  *apivolumes.Volumes
	csi  *csiVolumes
	scsi *scsiVolumes
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
func (p volumePlugins) ops(v volumemanager.Volume) (deviceOps, error) {
	switch v.Plugin {
	case volumemanager.PluginCSI:
		return p.csi, nil
	case volumemanager.PluginFC, volumemanager.PluginISCSI:
		return p.scsi, nil
	}
	return nil, noPlugin(v)
}

func (p volumePlugins) Stage(ctx context.Context, v volumemanager.Volume) error {
	ops, err := p.ops(v)
	if err != nil {
		return err
	}
	return ops.Stage(ctx, v)
}

func (p volumePlugins) Unstage(ctx context.Context, v volumemanager.Volume) error {
	ops, err := p.ops(v)
	if err != nil {
		return err
	}
	return ops.Unstage(ctx, v)
}

func (p volumePlugins) Publish(ctx context.Context, pv volumemanager.PodVolume) error {
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

func (p volumePlugins) Unpublish(ctx context.Context, pv volumemanager.PodVolume) error {
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

func (p volumePlugins) Map(ctx context.Context, pv volumemanager.PodVolume) error {
	ops, err := p.ops(pv.Volume)
	if err != nil {
		return err
	}
	return ops.Map(ctx, pv)
}

func (p volumePlugins) Unmap(ctx context.Context, pv volumemanager.PodVolume) error {
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

// volumeEvents records the volume manager's events on the pod, or on the
// node for pod "", in the node's event ring.
type volumeEvents struct {
	desired *desiredSet
	ring    *events.Ring
	node    string
}

func (e volumeEvents) Event(uid types.UID, eventType, reason, message string) {
	if uid == "" {
		e.ring.Record(events.Object{Kind: events.KindNode, Name: e.node}, eventType, reason, message)
		return
	}
	if pod, ok := e.desired.Pod(uid); ok {
		e.ring.Event(pod, eventType, reason, message)
		return
	}
	e.ring.Record(events.Object{Kind: events.KindPod, UID: uid}, eventType, reason, message)
}

// volumeStore keeps the volume manager's state in the state database. A
// corrupt record is logged and left out, so that the rest is restored:
// the volumes it held are rebuilt from their directories, or stay in use
// as placeholders.
type volumeStore struct {
	store *state.Store
	log   hclog.Logger
}

func (s volumeStore) Save(ctx context.Context, recs []volumemanager.Record) error {
	return s.store.SaveVolumes(ctx, recs)
}

func (s volumeStore) Load(ctx context.Context) ([]volumemanager.Record, error) {
	recs, err := s.store.LoadVolumes(ctx)
	if errors.Is(err, state.ErrCorruptRecord) {
		s.log.Error("volume state records left out; their volumes are rebuilt from disk or stay in use", "err", err)
		return recs, nil
	}
	return recs, err
}

// podVolumes is the volume manager as the lifecycle's Volumes, with the
// kubelet's bound on one wait for the mounts.
type podVolumes struct{ m *volumemanager.Manager }

func (v podVolumes) MountPod(ctx context.Context, pod *v1.Pod) error {
	ctx, cancel := context.WithTimeout(ctx, mountTimeout)
	defer cancel()
	return v.m.MountPod(ctx, pod)
}

func (v podVolumes) UnmountPod(ctx context.Context, pod *v1.Pod) error {
	return v.m.UnmountPod(ctx, pod)
}

var _ lifecycle.Volumes = podVolumes{}

// newVolumeManager builds the volume manager over the host's volumes and
// the volume plugins.
func (n *Node) newVolumeManager() error {
	routes, err := csiDriverRoutes(n.cfg.PluginSpecs)
	if err != nil {
		return err
	}
	n.hostVolumes = hostvolumes.New(n.cfg.RootDir, hostvolumes.SystemMounter{})
	n.apiVolumes = n.newAPIVolumes()
	csi := &csiVolumes{root: n.cfg.RootDir, host: n.hostVolumes, clients: supervisorVolumes{n.cfg.Plugins}, routes: routes}
	scsi := newSCSIVolumes(n, supervisorVolumes{n.cfg.Plugins})
	if err := scsi.check(); err != nil {
		return err
	}
	reconstruction, err := newReconstructionMetrics(n.cfg.Registry)
	if err != nil {
		return err
	}
	n.volumes = volumemanager.NewManager(volumemanager.Config{
		Plugins:    volumePlugins{host: n.hostVolumes, api: n.apiVolumes, csi: csi, scsi: scsi},
		Classifier: volumemanager.ClassifierFunc(classifyVolumeError),
		Store:      volumeStore{n.store, n.log.Named("volumes")},
		Clock:      n.clock,
		Resolver:   n.claimResolver(),
		Events:     volumeEvents{desired: n.desired, ring: n.events, node: n.cfg.NodeName},
		Metrics:    reconstruction,
	})
	if err := reconstruction.watch(n.cfg.Registry, n.volumes); err != nil {
		return err
	}
	n.volumeStats, err = newVolumeStats(n.cfg.Registry, n.volumes, pluginMetrics{csi: csi, scsi: scsi, caps: supervisorCapabilities(n.cfg.Plugins)}, n.clock, n.log.Named("volumes"))
	return err
}

// claimResolver resolves the claims of pods: see podClaims.
func (n *Node) claimResolver() podClaims {
	c := podClaims{static: &n.claims, origin: n.desired.nextOrigin}
	if n.cfg.Kubernetes.enabled() {
		c.api = &apiClaims{client: n.cfg.Kubernetes.Client}
	}
	return c
}

// runVolumes rebuilds the volume manager's state from what the last run
// left, then reconciles until ctx is done.
func (n *Node) runVolumes(ctx context.Context) {
	recon := volumeReconstructor{host: n.hostVolumes, scsi: newSCSIVolumes(n, supervisorVolumes{n.cfg.Plugins})}
	if err := n.volumes.Reconstruct(ctx, n.hostVolumes, recon); err != nil {
		n.log.Warn("rebuilding the volume state; the volumes it names stay in use until their pods are gone", "err", err)
	}
	close(n.volumesReady)
	if n.apiVolumes != nil {
		go n.apiVolumes.Run(ctx)
	}
	if err := n.volumes.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		n.log.Error("volume manager stopped", "err", err)
	}
}

// populateVolumes adds, on the first apply after the start, every pod that
// may still run to the volume manager's desired state, then lets it
// unpublish what no pod needs: a running pod's volumes are never torn down
// before its worker asks for them again.
func (n *Node) populateVolumes(ctx context.Context, updates []lifecycle.UpdatePodOptions) {
	if n.volumesPopulated || n.volumes == nil { // nil: a node built without volumes
		return
	}
	n.volumesPopulated = true
	select {
	case <-n.volumesReady:
	case <-ctx.Done():
		return
	}
	for _, u := range updates {
		if u.Pod == nil || isTerminal(u.Pod.Status.Phase) {
			continue
		}
		if err := n.volumes.AddPod(ctx, u.Pod); err != nil {
			n.log.Warn("volumes of pod", "pod", u.Pod.Namespace+"/"+u.Pod.Name, "uid", u.Pod.UID, "err", err)
		}
	}
	n.volumes.MarkDesiredPopulated()
}

// containerMounts are the runtime mounts of a container's volumeMounts.
func (n *Node) containerMounts(pod *v1.Pod, c *v1.Container) ([]*runtimev1.Mount, error) {
	return n.hostVolumes.ContainerMounts(pod, c, func(name string) (volumemanager.PodVolume, bool) {
		return n.volumes.DesiredVolume(pod.UID, name)
	})
}

// containerDevices are the runtime devices of a container's volumeDevices.
func (n *Node) containerDevices(pod *v1.Pod, c *v1.Container) ([]*runtimev1.Device, error) {
	return n.hostVolumes.ContainerDevices(pod, c, func(name string) (volumemanager.PodVolume, bool) {
		return n.volumes.DesiredVolume(pod.UID, name)
	})
}
