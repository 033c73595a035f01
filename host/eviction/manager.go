package eviction

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// DefaultPeriod is how often the manager measures, the kubelet's eviction
// monitoring interval.
const DefaultPeriod = 10 * time.Second

// Config is what a Manager needs.
type Config struct {
	// RootDir is the host's root directory: the pods' log and volume
	// directories are under it.
	RootDir string
	// Pods are the pods that may run: the manager measures those with a
	// limit and no terminal status.
	Pods func() []*v1.Pod
	// Stats gives the runtime plugin's stats (writable layers): host/node
	// passes host/nodestats' last reading, so that the runtime is asked
	// once per period for the summary and for eviction.
	Stats func(ctx context.Context) (*runtimev1.ListStatsResponse, error)
	// Evict kills the pod with e's status (see FailedStatus) and a grace
	// period of GracePeriodSeconds, and records the Warning event. It must
	// not block for long; the manager asks it once per pod.
	Evict func(pod *v1.Pod, e Eviction)
	// Period between measurements; zero: DefaultPeriod.
	Period time.Duration
	Logger hclog.Logger

	// Signals measures the node's pressure signals (see Observations);
	// rt is the runtime's stats of this check, nil when they could not be
	// read. Nil: no node-pressure eviction.
	Signals func(rt *runtimev1.ListStatsResponse) (Observations, error)
	// Thresholds are the hard eviction thresholds; nil: DefaultThresholds
	// (an empty list: none).
	Thresholds []Threshold
	// TransitionPeriod is how long a pressure condition stays after its
	// signal recovered; zero: DefaultPressureTransitionPeriod.
	TransitionPeriod time.Duration
	// NodeEvent records an event on the node (the kubelet's
	// EvictionThresholdMet); nil: none.
	NodeEvent func(eventType, reason, message string)
	// Now is the clock of the transition period; nil: time.Now.
	Now func() time.Time
	// Cleaned reports whether a pod evicted for node pressure has given
	// back what it used (its containers stopped, its volumes torn down),
	// the kubelet's podCleanedUpFunc. After a node-pressure eviction the
	// manager evicts no other pod for pressure until the evicted one is
	// cleaned up and a reading of the signal taken after that still meets
	// the threshold, or PodCleanupTimeout passed, as the kubelet waits for
	// the evicted pod's cleanup. Nil: no wait.
	Cleaned func(uid types.UID) bool
}

// Manager measures the pods' local storage every period and evicts those
// over their limits.
type Manager struct {
	cfg Config
	// evicted are the pods handed to Evict, so that each is evicted once;
	// refused are the critical pods over a limit, logged once.
	evicted, refused map[types.UID]bool
	// lastErr is the last measuring error, logged once while it repeats.
	lastErr string
	// lastObserved is when each pressure condition was last met.
	lastObserved map[v1.NodeConditionType]time.Time
	// reclaiming is the last node-pressure eviction while the manager
	// waits for its cleanup (see Config.Cleaned); nil: none.
	reclaiming *reclaim

	mu         sync.Mutex
	conditions []v1.NodeConditionType
}

// New returns a manager; Run starts it.
func New(cfg Config) *Manager {
	if cfg.Period <= 0 {
		cfg.Period = DefaultPeriod
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Thresholds == nil {
		cfg.Thresholds = DefaultThresholds()
	}
	if cfg.TransitionPeriod <= 0 {
		cfg.TransitionPeriod = DefaultPressureTransitionPeriod
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Manager{cfg: cfg, evicted: map[types.UID]bool{}, refused: map[types.UID]bool{},
		lastObserved: map[v1.NodeConditionType]time.Time{}}
}

// Run measures every period until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	t := time.NewTicker(m.cfg.Period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.Check(ctx)
	}
}

// Check measures once: it evicts the pods over their local storage
// limits; if none was, it measures the node's pressure signals and evicts
// at most one pod for the first threshold met, as the kubelet's eviction
// manager in one monitoring interval. Calls must not overlap (Run makes
// them one after another).
func (m *Manager) Check(ctx context.Context) {
	var limited, active []*v1.Pod
	live := map[types.UID]bool{}
	for _, pod := range m.cfg.Pods() {
		live[pod.UID] = true
		if m.evicted[pod.UID] {
			continue
		}
		active = append(active, pod)
		if hasLimit(pod) {
			limited = append(limited, pod)
		}
	}
	for uid := range m.evicted {
		if !live[uid] {
			delete(m.evicted, uid)
		}
	}
	for uid := range m.refused {
		if !live[uid] {
			delete(m.refused, uid)
		}
	}
	if len(limited) == 0 && m.cfg.Signals == nil {
		return
	}
	// Without the runtime's stats the writable layers are unknown; the
	// logs and emptyDirs are still measured and enforced.
	rt, err := m.cfg.Stats(ctx)
	if err != nil {
		m.logErr("reading the runtime's stats; writable layers not counted", err)
		rt = nil
	}
	layers := writableLayers(rt)
	dedicated := m.dedicatedImageFs(rt)
	if m.checkLimits(ctx, limited, layers, dedicated) {
		return
	}
	if m.cfg.Signals != nil {
		m.checkPressure(ctx, rt, active, layers, dedicated)
	}
}

// checkLimits evicts the pods over their local storage limits; true when
// it evicted one.
func (m *Manager) checkLimits(ctx context.Context, limited []*v1.Pod, layers map[types.UID]map[string]uint64, dedicated bool) bool {
	evicted := false
	for _, pod := range limited {
		u, err := measurePod(ctx, m.cfg.RootDir, pod, layers[pod.UID])
		if err != nil {
			m.logErr("measuring a pod's local storage", err, "pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID)
			continue
		}
		u.DedicatedImageFs = dedicated
		e, ok := Decide(pod, u)
		if !ok {
			continue
		}
		if Critical(pod) {
			if !m.refused[pod.UID] {
				m.refused[pod.UID] = true
				m.cfg.Logger.Error("cannot evict a critical pod", "pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID, "message", e.Message)
			}
			continue
		}
		m.evicted[pod.UID] = true
		evicted = true
		m.cfg.Logger.Info("evicting pod", "pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID, "signal", e.Signal, "message", e.Message)
		m.cfg.Evict(pod, e)
	}
	return evicted
}

func (m *Manager) logErr(msg string, err error, kv ...any) {
	if err.Error() == m.lastErr {
		return
	}
	m.lastErr = err.Error()
	m.cfg.Logger.Warn(msg, append(kv, "err", err)...)
}

// hasLimit reports whether the pod has a limit Decide looks at: an
// ephemeral-storage limit on a container, or a sizeLimit on an emptyDir
// on disk.
func hasLimit(pod *v1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if e := v.EmptyDir; e != nil && e.Medium == v1.StorageMediumDefault && e.SizeLimit != nil && e.SizeLimit.Sign() > 0 {
			return true
		}
	}
	has := func(cs []v1.Container) bool {
		for _, c := range cs {
			if _, ok := c.Resources.Limits[v1.ResourceEphemeralStorage]; ok {
				return true
			}
		}
		return false
	}
	return has(pod.Spec.Containers) || has(pod.Spec.InitContainers)
}

// dedicatedImageFs reports whether the runtime's image filesystem (the
// first it names) is another filesystem than the root directory's; not
// when either is unknown.
func (m *Manager) dedicatedImageFs(rt *runtimev1.ListStatsResponse) bool {
	fss := rt.GetImageFilesystems()
	if len(fss) == 0 || fss[0].GetMountpoint() == "" {
		return false
	}
	a, errA := deviceOf(m.cfg.RootDir)
	b, errB := deviceOf(fss[0].GetMountpoint())
	return errA == nil && errB == nil && a != b
}
