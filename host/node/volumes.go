package node

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/events"
	"github.com/podhost/podhost/host/state"
	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/apivolumes"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	"github.com/podhost/podhost/host/volumeplugins"
	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// mountTimeout bounds one wait of a pod sync for its volumes, as the
// kubelet's: the sync then fails and the pod worker retries, while the
// volume manager keeps trying in the background.
const mountTimeout = 2*time.Minute + 3*time.Second

// volumeEvents records the volume manager's events on the pod, or on the
// node for pod "", in the node's event ring, and logs the warnings (a
// failed mount or unmount) at warn.
type volumeEvents struct {
	desired *desiredSet
	ring    *events.Ring
	node    string
	log     hclog.Logger // warnings are logged too; nil logs none
}

func (e volumeEvents) Event(uid types.UID, eventType, reason, message string) {
	if e.log != nil && eventType == events.Warning {
		e.log.Warn("volume: "+message, "uid", uid, "reason", reason)
	}
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
// kubelet's bound on one wait for the mounts. Once they are mounted, the
// files of the pod's downward API items are rewritten if its labels or
// annotations changed, as the kubelet remounts such volumes on each sync.
type podVolumes struct {
	m   *volumemanager.Manager
	api *apivolumes.Volumes // nil: no API volumes
}

func (v podVolumes) MountPod(ctx context.Context, pod *v1.Pod) error {
	ctx, cancel := context.WithTimeout(ctx, mountTimeout)
	defer cancel()
	if err := v.m.MountPod(ctx, pod); err != nil {
		return err
	}
	if v.api != nil {
		v.api.RefreshPod(ctx, pod)
	}
	return nil
}

func (v podVolumes) UnmountPod(ctx context.Context, pod *v1.Pod) error {
	return v.m.UnmountPod(ctx, pod)
}

var _ lifecycle.Volumes = podVolumes{}

// newVolumeManager builds the volume manager over the host's volumes and
// the volume plugins (host/volumeplugins).
func (n *Node) newVolumeManager() error {
	n.hostVolumes = hostvolumes.New(n.cfg.RootDir, hostvolumes.SystemMounter{})
	n.apiVolumes = n.newAPIVolumes()
	plugins, err := volumeplugins.New(volumeplugins.Config{
		Root: n.cfg.RootDir, Node: n.cfg.NodeName, Host: n.hostVolumes, API: n.apiVolumes, Specs: n.cfg.PluginSpecs,
		Clients: volumeplugins.SupervisorClients(n.cfg.Plugins), Capabilities: volumeplugins.SupervisorCapabilities(n.cfg.Plugins),
		FSGroupPolicy: n.csiFSGroupPolicy(), PodInfoOnMount: n.csiPodInfoOnMount(), Secret: n.volumeSecrets(),
	})
	if err != nil {
		return err
	}
	n.volumePlugins = plugins
	n.newPluginRegistration()
	reconstruction, err := newReconstructionMetrics(n.cfg.Registry)
	if err != nil {
		return err
	}
	n.volumes = volumemanager.NewManager(volumemanager.Config{
		Plugins:    plugins,
		Classifier: volumemanager.ClassifierFunc(volumeplugins.Classify),
		Store:      volumeStore{n.store, n.log.Named("volumes")},
		Clock:      n.clock,
		Resolver:   n.claimResolver(),
		Events:     volumeEvents{desired: n.desired, ring: n.events, node: n.cfg.NodeName, log: n.log.Named("volumes")},
		Metrics:    reconstruction,
		Mounts:     plugins,
		BootID:     readBootID(),

		Attachments: n.volumeAttachments(),
	})
	if err := reconstruction.watch(n.cfg.Registry, n.volumes); err != nil {
		return err
	}
	n.volumeStats, err = newVolumeStats(n.cfg.Registry, n.volumes, plugins, n.clock, n.log.Named("volumes"))
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
	if err := n.volumes.Reconstruct(ctx, n.hostVolumes, n.volumePlugins); err != nil {
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

// containerMounts are the runtime mounts of a container's volumeMounts;
// env, the container's, expands their subPathExpr.
func (n *Node) containerMounts(pod *v1.Pod, c *v1.Container, env map[string]string) ([]*runtimev1.Mount, error) {
	return n.hostVolumes.ContainerMounts(pod, c, env, func(name string) (volumemanager.PodVolume, bool) {
		return n.volumes.DesiredVolume(pod.UID, name)
	})
}

// containerDevices are the runtime devices of a container's volumeDevices.
func (n *Node) containerDevices(pod *v1.Pod, c *v1.Container) ([]*runtimev1.Device, error) {
	return n.hostVolumes.ContainerDevices(pod, c, func(name string) (volumemanager.PodVolume, bool) {
		return n.volumes.DesiredVolume(pod.UID, name)
	})
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
