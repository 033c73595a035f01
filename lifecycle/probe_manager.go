package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ProbeManagerConfig wires a ProbeManager. Killer, Recorder, Metrics,
// Logger and OnChange may be nil.
type ProbeManagerConfig struct {
	Clock   Clock
	Runner  ProbeRunner
	Killer  ContainerKiller
	Results *ProbeResults
	// Statuses is the runtime cache the workers read containers from.
	Statuses interface {
		Get(uid types.UID) (*PodStatus, error)
	}
	// Pods says whether a pod is terminating.
	Pods     terminationState
	Recorder Recorder
	Metrics  *ProbeMetrics
	Logger   *slog.Logger
	// OnChange is called after a result of the pod changed; the host
	// passes StatusManager.RefreshProbes.
	OnChange func(uid types.UID)
	// Syncs, when set, receives the UID of a pod whose container's
	// startup probe succeeded: the pod is to be synced at once, so that
	// the container after a sidecar starts. The host passes the sync
	// loop's ProbeSyncs; a send waits for the loop.
	Syncs chan<- types.UID
}

// ProbeManager runs one worker per probe of each container of the pods
// added to it: the kubelet's prober manager. Each worker is a goroutine
// that waits periodSeconds on the Clock between two steps of its
// probeState. Workers start when Run is running and stop with their pod
// (StopPod), when termination is requested, when their container exited
// for good, or when Run returns; Run waits for all of them.
type ProbeManager struct {
	cfg ProbeManagerConfig
	log *slog.Logger

	mu      sync.Mutex
	workers map[probeKey]*probeWorker
	pending []*probeWorker
	bell    chan struct{}
	wg      sync.WaitGroup
}

type probeWorker struct {
	key   probeKey
	pod   *v1.Pod
	spec  *v1.Container
	state probeState
	stop  chan struct{}
	// now asks for a step at once (a readiness worker, when its
	// container's startup probe succeeded), besides the period's.
	now chan struct{}
}

// NewProbeManager returns a manager without workers.
func NewProbeManager(cfg ProbeManagerConfig) *ProbeManager {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ProbeManager{cfg: cfg, log: log, workers: map[probeKey]*probeWorker{}, bell: make(chan struct{}, 1)}
}

// AddPod creates the workers of every probe of the pod's app containers
// and sidecars that has none yet. It never blocks; Run starts the workers.
func (m *ProbeManager) AddPod(pod *v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range probedContainers(pod) {
		for _, k := range []ProbeKind{Startup, Readiness, Liveness} {
			p := probeOf(c, k)
			key := probeKey{pod.UID, c.Name, k}
			if p == nil || m.workers[key] != nil {
				continue
			}
			w := &probeWorker{key: key, pod: pod, spec: c, stop: make(chan struct{}), now: make(chan struct{}, 1),
				state: probeState{kind: k, probe: ProbeWithDefaults(p)}}
			m.workers[key] = w
			m.pending = append(m.pending, w)
		}
	}
	if len(m.pending) > 0 {
		select {
		case m.bell <- struct{}{}:
		default:
		}
	}
}

// StopPod stops every worker of the pod; the results stay until
// RemovePod.
func (m *ProbeManager) StopPod(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, w := range m.workers {
		if k.uid == uid {
			close(w.stop)
			delete(m.workers, k)
			m.cfg.Metrics.forget(w.pod, k.container, k.kind)
		}
	}
}

// RemovePod stops the pod's workers and forgets its results.
func (m *ProbeManager) RemovePod(uid types.UID) {
	m.StopPod(uid)
	m.cfg.Results.RemovePod(uid)
}

// Workers returns the number of live workers.
func (m *ProbeManager) Workers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.workers)
}

// Run starts the workers added until ctx is done, then stops every worker
// and returns once none is left.
func (m *ProbeManager) Run(ctx context.Context) {
	defer m.wg.Wait()
	for {
		m.mu.Lock()
		start := m.pending
		m.pending = nil
		m.mu.Unlock()
		for _, w := range start {
			m.wg.Add(1)
			go m.work(ctx, w)
		}
		select {
		case <-ctx.Done():
			return
		case <-m.bell:
		}
	}
}

// work is the goroutine of one worker: a step now, then one every period,
// on the kubelet's ticker schedule: steps begin at start + k·period however
// long each takes; one that outlasts its period is followed at once by the
// next (the tick a ticker holds), and the ticks it missed are dropped.
func (m *ProbeManager) work(ctx context.Context, w *probeWorker) {
	defer m.wg.Done()
	period := seconds(w.state.probe.PeriodSeconds)
	next := m.cfg.Clock.Now().Add(period)
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.stop:
			return
		default:
		}
		if !m.step(ctx, w) {
			m.retire(w)
			return
		}
		wait := nextTick(&next, m.cfg.Clock.Now(), period)
		select {
		case <-ctx.Done():
			return
		case <-w.stop:
			return
		case <-m.cfg.Clock.After(wait):
		case <-w.now:
		}
	}
}

// nextTick returns how long to wait after a step that ended at now for the
// tick due at *next, and moves *next to the tick after. A tick already due
// is taken at once (wait 0), and the ticks missed before now are dropped.
func nextTick(next *time.Time, now time.Time, period time.Duration) time.Duration {
	wait := max(next.Sub(now), 0)
	for !next.After(now) {
		*next = next.Add(period)
	}
	if wait > 0 {
		*next = next.Add(period)
	}
	return wait
}

// retire removes a worker that stopped by itself.
func (m *ProbeManager) retire(w *probeWorker) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.workers[w.key] == w {
		delete(m.workers, w.key)
	}
}

func (m *ProbeManager) terminating(uid types.UID) bool {
	return m.cfg.Pods != nil && m.cfg.Pods.IsPodTerminationRequested(uid)
}

// step performs one period of a worker; false ends the worker.
func (m *ProbeManager) step(ctx context.Context, w *probeWorker) bool {
	uid, name := w.key.uid, w.key.container
	st, _ := m.cfg.Statuses.Get(uid)
	// A sidecar restarts whatever the pod's policy.
	restartNever := NeverRestarts(w.pod, w.spec)
	in := probeInput{now: m.cfg.Clock.Now(), terminating: m.terminating(uid), restartNever: restartNever, container: st.Container(name)}
	if in.container != nil {
		in.started = m.cfg.Results.passed(uid, w.spec, Startup, in.container.ID)
	}
	next := w.state.next(in)
	if next.set {
		m.setResult(ctx, w, next.result)
	}
	if next.stop || !next.run {
		return !next.stop
	}
	target := ProbeTarget{Pod: w.pod, Container: w.spec, ContainerID: w.state.containerID, Kind: w.key.kind, Probe: w.state.probe}
	if st != nil && len(st.IPs) > 0 {
		target.PodIP = st.IPs[0]
	}
	pctx, cancel := context.WithTimeout(ctx, probeCallLimit(&w.state.probe))
	began := m.cfg.Clock.Now()
	res, out, err := m.cfg.Runner.RunProbe(pctx, target)
	cancel()
	if err != nil {
		res = ProbeUnknown
	}
	if res == ProbeWarning {
		m.event(w.pod, EventWarning, "ProbeWarning", fmt.Sprintf("%s probe warning: %s", w.key.kind, out))
		res = ProbeSuccess
	}
	m.cfg.Metrics.observe(w.pod, name, w.key.kind, res, m.cfg.Clock.Now().Sub(began))
	if err != nil {
		m.log.Debug("probe errored; result dropped", "pod", PodFullName(w.pod), "container", name, "probe", w.key.kind.String(), "err", err)
		return true
	}
	// Termination may have begun while the probe ran: its outcome must
	// not kill or unready anything any more.
	if m.terminating(uid) || ctx.Err() != nil {
		return false
	}
	if res == ProbeFailure {
		m.event(w.pod, EventWarning, "Unhealthy", fmt.Sprintf("%s probe failed: %s", w.key.kind, out))
	}
	result, set, kill := w.state.observe(res)
	if set {
		m.setResult(ctx, w, result)
	}
	if kill {
		m.kill(ctx, w)
	}
	return true
}

// kill stops a container whose liveness or startup probe failed.
func (m *ProbeManager) kill(ctx context.Context, w *probeWorker) {
	kind := "liveness"
	if w.key.kind == Startup {
		kind = "startup"
	}
	msg := fmt.Sprintf("Container %s failed %s probe, will be restarted", w.key.container, kind)
	if IsRestartableInitContainer(w.spec) {
		msg = fmt.Sprintf("Init container %s failed %s probe", w.key.container, kind)
	}
	m.event(w.pod, EventNormal, "Killing", msg)
	if m.cfg.Killer == nil {
		return
	}
	if err := m.cfg.Killer.KillContainer(ctx, w.pod, w.key.container, w.state.containerID, probeGrace(w.pod, &w.state.probe), msg); err != nil {
		m.log.Error("killing container after a failed probe", "pod", PodFullName(w.pod), "container", w.key.container, "err", err)
	}
}

// setResult stores a result; a change refreshes the pod's status, and a
// startup success runs the container's readiness probe at once and asks
// for a sync of the pod.
func (m *ProbeManager) setResult(ctx context.Context, w *probeWorker, r ProbeResult) {
	if !m.cfg.Results.Set(w.key.uid, w.key.container, w.key.kind, w.state.containerID, r) {
		return
	}
	if m.cfg.OnChange != nil {
		m.cfg.OnChange(w.key.uid)
	}
	if w.key.kind != Startup || r != ProbeSuccess {
		return
	}
	// The readiness probe runs at once rather than a period later, as the
	// kubelet's: the container may be ready as soon as it started.
	m.mu.Lock()
	if rw := m.workers[probeKey{uid: w.key.uid, container: w.key.container, kind: Readiness}]; rw != nil {
		select {
		case rw.now <- struct{}{}:
		default:
		}
	}
	m.mu.Unlock()
	if m.cfg.Syncs == nil {
		return
	}
	select {
	case m.cfg.Syncs <- w.key.uid:
	case <-ctx.Done():
	case <-w.stop:
	}
}

func (m *ProbeManager) event(pod *v1.Pod, typ, reason, msg string) {
	if m.cfg.Recorder != nil {
		m.cfg.Recorder.Event(pod, typ, reason, msg)
	}
}
