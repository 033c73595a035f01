package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/events"
	"github.com/podhost/podhost/host/eviction"
	"github.com/podhost/podhost/host/mirrorpods"
	"github.com/podhost/podhost/host/nodestats"
	"github.com/podhost/podhost/host/pluginregistration"
	"github.com/podhost/podhost/host/prober"
	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/host/state"
	"github.com/podhost/podhost/host/supervisor"
	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/apivolumes"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	"github.com/podhost/podhost/host/volumeplugins"
	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/sources"
	"github.com/podhost/podhost/sources/apisource"
	"github.com/podhost/podhost/sources/manifest"
)

// Cadences of the node's loops.
const (
	plegPeriod   = time.Second
	gcPeriod     = time.Minute
	historyKeep  = 24 * time.Hour
	removeTimout = 2 * time.Minute
)

// Source is a config source as the node consumes it: full snapshots, the
// newest one always available, and a signal once it reported.
type Source interface {
	Name() string
	Run(ctx context.Context) error
	Updates() <-chan sources.Snapshot
}

// Config wires a Node.
type Config struct {
	// RootDir holds the state database and the pod log directories.
	RootDir string
	// NodeName is this node's name; static pods get it appended.
	NodeName string
	// ManifestDir, when set, is watched for static pods.
	ManifestDir string
	// Sources are further config sources (the local API's).
	Sources []Source
	// Plugins is the running plugin supervisor; RuntimePlugin names the
	// runtime plugin in it.
	Plugins       *supervisor.Manager
	RuntimePlugin string
	// PluginSpecs are the plugins the supervisor runs: a CSI volume goes
	// to the volume plugin whose config lists its driver (drivers[].name).
	PluginSpecs []supervisor.PluginSpec
	// Registry receives the lifecycle metrics; nil uses a private one.
	Registry prometheus.Registerer
	Logger   hclog.Logger
	// HostVersion is reported by GET /v1/node.
	HostVersion string
	// LogRotation is the policy of container log rotation; the zero value
	// rotates nothing.
	LogRotation runtimemanager.LogRotation
	// NodeIPs are the node's addresses, primary first: every pod's
	// status.hostIP and hostIPs, a host-network pod's pod IPs and, in
	// Kubernetes mode, the Node's InternalIP addresses. Empty: none.
	NodeIPs []string
	// Kubernetes, when its Client is set, makes the node a node of that
	// API server (kube.go).
	Kubernetes KubeConfig
	// AllowedUnsafeSysctls are the sysctls beyond the safe set pods may
	// set (names, or prefixes ending in "*").
	AllowedUnsafeSysctls []string
	// SeccompProfileRoot is the directory of Localhost seccomp profiles;
	// empty: <RootDir>/seccomp.
	SeccompProfileRoot string
	// PluginRegistrationDir is where CSI drivers register
	// (host/pluginregistration); empty: <RootDir>/plugins_registry.
	PluginRegistrationDir string
	// ClusterDNS and ClusterDomain configure the DNS of ClusterFirst pods
	// and the FQDN in their /etc/hosts (runtimemanager.Options).
	ClusterDNS    []string
	ClusterDomain string
	// EvictionHard are the hard eviction thresholds by signal, as the
	// kubelet's evictionHard ("memory.available": "100Mi",
	// "nodefs.available": "10%"); a signal left out keeps its default
	// (eviction.DefaultThresholds), "0%" turns it off.
	EvictionHard map[string]string
	// EvictionPressureTransitionPeriod is how long a pressure condition
	// stays after its signal recovered; zero: 5m.
	EvictionPressureTransitionPeriod time.Duration
}

// Node is the running agent: see the package doc.
type Node struct {
	// finishedPods wakes the local API's pod watches when a worker
	// finished its pod, which then leaves their list (api.go).
	finishedPods broadcast

	cfg    Config
	log    hclog.Logger
	clock  lifecycle.Clock
	store  *state.Store
	events *events.Ring
	// eviction enforces local storage limits and node pressure
	// (eviction.go).
	eviction *eviction.Manager
	desired  *desiredSet
	sources  []Source
	merger   *sources.Merger
	api      *apisource.Source
	kube     *kubeParts
	started  time.Time
	// finished are the pods that had finished before this start.
	finished *finishedPods
	// leaving are the pods that left the desired set and still stop.
	leaving leavingPods

	core    *lifecycle.PodWorkers
	workers *lifecycle.Workers
	cache   *lifecycle.Cache
	status  *lifecycle.StatusManager
	pleg    *lifecycle.PLEG
	loop    *lifecycle.SyncLoop
	runtime *runtimemanager.Manager
	probes  *lifecycle.ProbeManager
	// admission refuses pods that cannot run here (admit.go).
	admission *admitter
	updates   chan lifecycle.ConfigChange
	// The volume manager and the volumes the host serves itself;
	// volumesReady is closed once its state is rebuilt.
	volumes          *volumemanager.Manager
	hostVolumes      *hostvolumes.Host
	apiVolumes       *apivolumes.Volumes
	volumePlugins    *volumeplugins.Plugins
	registration     *pluginregistration.Watcher
	volumesReady     chan struct{}
	volumesPopulated bool
	volumeStats      *volumemanager.StatsGatherer
	// stats keeps the node's numbers for the daemon endpoint and the
	// local API (podhost top).
	stats  *nodestats.Provider
	claims staticClaims
	// objects are the sources' ConfigMaps and Secrets; apiEnv reads the
	// API server's for env, keeping the last good answers (objects.go).
	objects    staticObjects
	apiEnv     runtimemanager.EnvObjects
	relist     chan struct{}
	eventsLive atomic.Bool // the runtime's event stream is open (plegperiod.go)
	removing   sync.WaitGroup
	shutdown   shutdownState
}

// New opens the state database, loads the pods applied through the local
// API and builds the node; Run starts it.
func New(ctx context.Context, cfg Config) (*Node, error) {
	log := cfg.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if err := os.MkdirAll(cfg.RootDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating root dir: %w", err)
	}
	store, err := state.Open(filepath.Join(cfg.RootDir, state.FileName), log.Named("state"))
	if err != nil {
		return nil, err
	}
	n := &Node{
		cfg:     cfg,
		log:     log,
		clock:   lifecycle.SystemClock{},
		store:   store,
		events:  events.New(events.Options{Registry: cfg.Registry}),
		desired: newDesiredSet(),
		updates: make(chan lifecycle.ConfigChange),
		relist:  make(chan struct{}, 1),
		started: time.Now(),

		volumesReady: make(chan struct{}),
		admission:    newAdmitter(cfg.Registry),
	}
	n.api = apisource.New(apisource.Options{Persister: apiPersister{store}, NodeName: cfg.NodeName})
	if err := n.api.Load(ctx); err != nil {
		store.Close()
		return nil, fmt.Errorf("loading the pods applied through the api: %w", err)
	}
	if r := store.Recovery(); r != nil {
		n.events.Record(events.Object{Kind: events.KindNode, Name: cfg.NodeName}, events.Warning, events.ReasonDatabaseRecovered,
			fmt.Sprintf("state database was unreadable (%s); moved to %s and rebuilt from the runtime", r.Reason, r.MovedTo))
	}
	if err := n.recoverFromShutdown(ctx); err != nil {
		n.log.Error("reading the last node shutdown; pods it stopped may show their stopped status", "err", err)
	}
	if n.finished, err = loadFinishedPods(ctx, store); err != nil {
		n.log.Error("pods that finished before this start may run again", "err", err)
	}
	if cfg.ManifestDir != "" {
		n.sources = append(n.sources, manifestSource{manifest.NewSource(manifest.Options{
			Dir: cfg.ManifestDir, NodeName: cfg.NodeName, Logger: log.Named("manifests"),
		})})
	}
	n.sources = append(n.sources, apiSource{n.api})
	if n.kube = newKube(cfg, n.runtimeType); n.kube != nil {
		n.sources = append(n.sources, n.kube.source)
		n.desired.mirrors = n.kube.source
	}
	n.sources = append(n.sources, cfg.Sources...)
	names := make([]string, len(n.sources))
	for i, s := range n.sources {
		names[i] = s.Name()
	}
	n.merger = sources.NewMerger(names...)
	if err := n.build(); err != nil {
		store.Close()
		return nil, err
	}
	if n.eviction, err = n.newEviction(); err != nil {
		store.Close()
		return nil, err
	}
	if n.kube != nil {
		if n.kube.agent, err = n.buildKubeAgent(); err != nil {
			store.Close()
			return nil, err
		}
	}
	return n, nil
}

// build wires the lifecycle core to the runtime plugin.
func (n *Node) build() error {
	slogger := newSlog(n.log.Named("lifecycle"))
	metrics := lifecycle.NewMetrics(n.cfg.Registry, n.clock)
	rtClient, err := n.cfg.Plugins.Runtime(n.cfg.RuntimePlugin)
	if err != nil {
		return fmt.Errorf("runtime plugin: %w", err)
	}
	reasons := lifecycle.NewReasonCache()
	results := lifecycle.NewProbeResults()
	runner := prober.New(prober.Options{Exec: runtimeExec{n}})
	if err := n.newVolumeManager(); err != nil {
		return fmt.Errorf("volume plugins: %w", err)
	}
	n.runtime, err = runtimemanager.New(runtimemanager.Options{
		Runtime: rtClient, Plugin: n.cfg.RuntimePlugin, Clock: n.clock, LogRoot: n.cfg.RootDir,
		Logger: n.log.Named("runtime"), Reasons: reasons,
		NodeResolvConf: nodeResolvConf(n.log), Recorder: n.events, Mounts: n.containerMounts, Devices: n.containerDevices,
		Hooks: runner, Probes: results, SeccompProfileRoot: n.seccompRoot(),
		ClusterDNS: n.cfg.ClusterDNS, ClusterDomain: n.cfg.ClusterDomain, EnvObjects: n.envObjects(),
		HostIPs: n.cfg.NodeIPs, Allocatable: n.nodeAllocatable, NodeMemoryBytes: machineMemory(n.log),
	})
	if err != nil {
		return fmt.Errorf("runtime manager: %w", err)
	}
	n.stats = n.newNodeStats()
	n.cache = lifecycle.NewCache()
	n.core = lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{
		Clock: n.clock, Jitter: jitter, Cache: n.cache, Metrics: metrics, Logger: slogger,
	})
	n.status = lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{
		Clock: n.clock, Sink: n.statusSink(), Pods: n.core, Lookup: n.desired, Metrics: metrics, Logger: slogger,
		Probes: results,
	})
	probeSyncs := make(chan types.UID, probeSyncBuffer)
	n.probes = n.newProbes(runner, results, probeSyncs, slogger)
	syncer := &lifecycle.Syncer{
		Runtime: n.runtime, Volumes: podVolumes{n.volumes, n.apiVolumes}, Status: n.status, Pods: n.core, Reasons: reasons,
		Recorder: n.events, Metrics: metrics, Clock: n.clock, Probes: n.probes, HostIPs: n.cfg.NodeIPs,
	}
	var mirrors lifecycle.MirrorPodDeleter
	if n.kube != nil {
		m := mirrorpods.New(n.cfg.Kubernetes.Client, n.cfg.NodeName)
		syncer.Mirrors, syncer.Logger, mirrors = m, slogger, m
	}
	n.workers = lifecycle.NewWorkers(n.core, n.podSyncer(syncer), n.cache, n.events)
	n.pleg = lifecycle.NewPLEG(n.runtime, n.cache, n.clock, metrics)
	n.workers.Inspect = n.pleg.Request
	n.workers.Released = n.workerReleased
	n.pleg.Busy = n.workers.Syncing
	n.loop = &lifecycle.SyncLoop{
		Config:  n.desired,
		Workers: n.workers,
		Housekeeper: &lifecycle.Housekeeper{
			Workers: n.workers, Runtime: n.runtime, Status: n.status, Metrics: metrics, Clock: n.clock, Logger: slogger,
			Mirrors: mirrors,
		},
		Events:     n.pleg.Events(),
		Updates:    n.updates,
		ProbeSyncs: probeSyncs,
		ShouldSync: func(p *v1.Pod) bool { return syncer.DueForDeadline(p) || syncer.DueForResize(p) },
		Clock:      n.clock,
		Logger:     slogger,
	}
	return nil
}

// Run runs the node until ctx is done, then waits for its goroutines. The
// containers keep running: stopping the node stops no pod.
func (n *Node) Run(ctx context.Context) error {
	defer n.store.Close()
	var wg sync.WaitGroup
	run := func(name string, f func(ctx context.Context)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(ctx)
			n.log.Debug("loop stopped", "loop", name)
		}()
	}
	for _, s := range n.sources {
		run("source "+s.Name(), func(ctx context.Context) {
			if err := s.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				n.log.Error("config source stopped", "source", s.Name(), "err", err)
			}
		})
	}
	run("volumes", n.runVolumes)
	run("volume stats", n.runVolumeStats)
	run("node stats", n.stats.Run)
	run("merge", n.mergeSources)
	run("pleg", n.runPLEG)
	run("workers", n.workers.Run)
	run("status", n.status.Run)
	run("probes", n.probes.Run)
	run("sync", n.loop.Run)
	run("plugins", n.watchPlugins)
	run("plugin registration", n.runPluginRegistration)
	run("runtime events", n.followRuntimeEvents)
	run("gc", n.collectGarbage)
	run("eviction", n.eviction.Run)
	if n.kube != nil {
		run("kubernetes node", func(ctx context.Context) { n.kube.agent.run(ctx, n.log) })
	}
	if n.cfg.LogRotation != (runtimemanager.LogRotation{}) {
		run("log rotation", func(ctx context.Context) { n.runtime.RotateLogs(ctx, n.cfg.LogRotation) })
	}
	<-ctx.Done()
	wg.Wait()
	n.removing.Wait()
	if n.kube != nil {
		n.kube.wg.Wait()
	}
	// The status loop has stopped, maybe with statuses not yet written:
	// write them before the store closes, so that what the API served last
	// (a pod that just finished) is what the next start finds.
	flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), statusFlushTimeout)
	defer cancel()
	n.status.SyncBatch(flush, true)
	return nil
}

// statusFlushTimeout bounds the last status write when the node stops.
const statusFlushTimeout = 5 * time.Second

// mergeSources merges the sources' snapshots into the desired set and
// hands the resulting changes to the sync loop.
func (n *Node) mergeSources(ctx context.Context) {
	merged := make(chan sources.Snapshot)
	for _, s := range n.sources {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case snap := <-s.Updates():
					select {
					case merged <- snap:
					case <-ctx.Done():
						return
					}
				}
			}
		}()
	}
	if len(n.sources) == 0 {
		n.apply(ctx, n.merger.Update(sources.Snapshot{}))
	}
	for {
		select {
		case <-ctx.Done():
			return
		case snap := <-merged:
			n.apply(ctx, n.merger.Update(snap))
		}
	}
}

// apply records a new desired set and sends its changes to the sync loop,
// which shows the new set when it takes them (also when there are no
// updates: rejections, errors and readiness change with it).
//
// Nothing is applied until every source has reported once: until then the
// owner of a name that two sources claim is not settled, and acting early
// could start a pod only to kill it a moment later.
func (n *Node) apply(ctx context.Context, d sources.Desired) {
	if !d.Synced {
		return
	}
	for _, r := range d.Rejected {
		n.log.Warn("pod rejected", "pod", r.Pod.Pod.Namespace+"/"+r.Pod.Pod.Name, "source", r.Pod.Origin.Where, "err", r.Err)
		n.events.Event(r.Pod.Pod, events.Warning, events.ReasonFailed, r.Err.Error())
	}
	n.rejectAPIPods(ctx, d.Rejected)
	for _, err := range d.Errors {
		n.log.Warn("config source error", "err", err)
		if item, ok := sourceErrorItem(err); ok {
			n.events.Record(events.Object{Kind: events.KindPod, Namespace: item.Pod.Namespace, Name: item.Pod.Name},
				events.Warning, events.ReasonFailed, err.Error())
		}
	}
	updates, commit := n.desired.apply(n.finished.restore(d), n.clock.Now())
	updates = n.admit(ctx, updates)
	updates = append(updates, n.mirrorSyncs(n.clock.Now())...)
	n.leaving.record(updates, n.core.ShouldPodBeFinished)
	n.claims.set(d)
	if n.objects.set(d) && n.apiVolumes != nil {
		n.apiVolumes.Kick() // their volumes' files follow at once
	}
	n.populateVolumes(ctx, updates)
	n.track(ctx, updates)
	select {
	case n.updates <- lifecycle.ConfigChange{Updates: updates, Commit: commit}:
	case <-ctx.Done():
	}
}

// track records the pods the updates create, in one commit. When that
// fails, each is tried on its own, so that one bad record loses no other.
func (n *Node) track(ctx context.Context, updates []lifecycle.UpdatePodOptions) {
	var refs []state.PodRef
	for _, u := range updates {
		if u.UpdateType == lifecycle.UpdateCreate {
			refs = append(refs, state.PodRef{Namespace: u.Pod.Namespace, Name: u.Pod.Name, UID: u.Pod.UID})
		}
	}
	err := n.store.TrackAll(ctx, refs)
	if err == nil {
		return
	}
	n.log.Warn("recording new pods in one commit; recording each on its own", "pods", len(refs), "err", err)
	for _, r := range refs {
		if _, err := n.store.Track(ctx, r.Namespace, r.Name, r.UID); err != nil {
			n.log.Error("recording pod", "pod", r.Namespace+"/"+r.Name, "uid", r.UID, "err", err)
		}
	}
}

// watchPlugins records plugin events and makes the PLEG relist at once when
// the runtime plugin comes back, so that pods resync.
func (n *Node) watchPlugins(ctx context.Context) {
	evs, cancel := n.cfg.Plugins.Subscribe()
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-evs:
			if !ok {
				return
			}
			n.recordPluginEvent(ev)
			n.resyncPluginRegistration(ev)
			if ev.Plugin == n.cfg.RuntimePlugin && (ev.Type == supervisor.EventRestarted || ev.Type == supervisor.EventReady) {
				select {
				case n.relist <- struct{}{}:
				default:
				}
			}
		}
	}
}

func (n *Node) recordPluginEvent(ev supervisor.Event) {
	reason, typ := "", events.Normal
	switch ev.Type {
	case supervisor.EventStarted:
		reason = events.ReasonPluginStarted
	case supervisor.EventRestarted:
		reason = events.ReasonPluginRestarted
	case supervisor.EventExited:
		reason, typ = events.ReasonPluginExited, events.Warning
	case supervisor.EventRefused:
		reason, typ = events.ReasonPluginRefused, events.Warning
	case supervisor.EventBackoff:
		reason, typ = events.ReasonPluginBackOff, events.Warning
	case supervisor.EventNotReady:
		reason, typ = events.ReasonPluginNotReady, events.Warning
	default:
		return
	}
	msg := fmt.Sprintf("plugin %s %s (restarts %d)", ev.Plugin, ev.Type, ev.Restarts)
	if ev.Err != "" {
		msg += ": " + ev.Err
	}
	if ev.Delay > 0 {
		msg += fmt.Sprintf("; next launch in %s", ev.Delay)
	}
	n.events.Record(events.Object{Kind: events.KindPlugin, Name: ev.Plugin}, typ, reason, msg)
}

// collectGarbage removes what finished pods left in the runtime and old
// pod history, every gcPeriod.
func (n *Node) collectGarbage(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.clock.After(gcPeriod):
		}
		if err := n.runtime.GarbageCollect(ctx, n.core.ShouldPodContentBeRemoved); err != nil && ctx.Err() == nil {
			n.log.Warn("runtime garbage collection", "err", err)
		}
		if _, err := n.store.ForgetHistory(ctx, n.clock.Now().Add(-historyKeep)); err != nil && ctx.Err() == nil {
			n.log.Warn("forgetting old pod history", "err", err)
		}
	}
}

// removingSyncer removes a deleted pod's containers, sandboxes and logs in
// the background as soon as it is terminated, so that nothing of it lingers
// until the next garbage collection. A pod that finished but is still
// desired (a completed job) keeps them: its logs stay readable.
type removingSyncer struct {
	lifecycle.PodSyncer
	node *Node
}

func (s *removingSyncer) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, status *lifecycle.PodStatus) error {
	if err := s.PodSyncer.SyncTerminatedPod(ctx, pod, status); err != nil {
		return err
	}
	if s.node.core.ShouldPodContentBeRemoved(pod.UID) {
		// Its volumes are gone (SyncTerminatedPod waited for them): its
		// directory goes now, with the pod, not after the containers.
		if err := s.node.runtime.RemovePodFiles(pod.UID); err != nil {
			s.node.log.Warn("removing the files of a deleted pod; garbage collection retries", "uid", pod.UID, "err", err)
		}
		s.node.removeInBackground(ctx, pod.UID)
	}
	return nil
}

// SyncTerminatingRuntimePod removes what a pod without config (an orphan:
// its record lost, its source gone) left in the runtime and on disk as
// soon as it is stopped, as for a deleted pod: nothing desires its logs,
// and its termination messages and /etc/hosts keep its pod directory
// until they go. RemovePod refuses while anything of it runs and never
// overlaps a sync of the UID.
func (s *removingSyncer) SyncTerminatingRuntimePod(ctx context.Context, pod *lifecycle.RunningPod) error {
	if err := s.PodSyncer.SyncTerminatingRuntimePod(ctx, pod); err != nil {
		return err
	}
	s.node.removeInBackground(ctx, pod.ID)
	return nil
}

func (n *Node) removeInBackground(ctx context.Context, uid types.UID) {
	n.removing.Add(1)
	go func() {
		defer n.removing.Done()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimout)
		defer cancel()
		if err := n.runtime.RemovePod(rctx, uid); err != nil {
			n.log.Warn("removing terminated pod from the runtime; garbage collection retries", "uid", uid, "err", err)
		}
	}()
}
