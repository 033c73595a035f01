package lifecycle

import (
	"log/slog"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Default cadences of the pod worker (docs/lifecycle.md, section 7).
const (
	DefaultResyncInterval = time.Minute
	DefaultBackOffPeriod  = 10 * time.Second
	networkBackOffPeriod  = time.Second
	jitterFactor          = 0.5
)

// StatusReader reads the runtime cache without waiting.
type StatusReader interface {
	// Get returns the cached status of the pod; an unknown pod gives an
	// error wrapping ErrNotFound or an empty status.
	Get(uid types.UID) (*PodStatus, error)
}

// PodWorkersConfig wires a PodWorkers core.
type PodWorkersConfig struct {
	Clock Clock
	// Jitter spreads re-queue times; nil means NoJitter.
	Jitter Jitter
	// Cache is read on first sight of a pod in a terminal phase; nil means
	// the runtime is never consulted.
	Cache StatusReader
	// Queue receives re-sync times; nil creates one.
	Queue          *WorkQueue
	ResyncInterval time.Duration
	BackOffPeriod  time.Duration
	Metrics        *Metrics
	Logger         *slog.Logger
}

// PodWorkers is the deterministic core of the pod worker. It holds the
// per-UID sync status, decides what each worker does next and answers the
// lifecycle queries. It starts no goroutines and performs no I/O: UpdatePod
// returns what the driver must do, Begin hands out the next piece of work
// and Complete takes its result. All methods are safe for concurrent use.
type PodWorkers struct {
	mu  sync.Mutex
	cfg PodWorkersConfig
	log *slog.Logger

	podsSynced    bool
	statuses      map[types.UID]*podSyncStatus
	startedStatic map[string]types.UID
	waitingStatic map[string][]types.UID
	nextWorkID    uint64
}

// NewPodWorkers returns an empty core.
func NewPodWorkers(cfg PodWorkersConfig) *PodWorkers {
	if cfg.Jitter == nil {
		cfg.Jitter = NoJitter
	}
	if cfg.Queue == nil {
		cfg.Queue = NewWorkQueue(cfg.Clock)
	}
	if cfg.ResyncInterval == 0 {
		cfg.ResyncInterval = DefaultResyncInterval
	}
	if cfg.BackOffPeriod == 0 {
		cfg.BackOffPeriod = DefaultBackOffPeriod
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &PodWorkers{
		cfg:           cfg,
		log:           log,
		statuses:      map[types.UID]*podSyncStatus{},
		startedStatic: map[string]types.UID{},
		waitingStatic: map[string][]types.UID{},
	}
}

// Queue returns the work queue that times re-syncs.
func (p *PodWorkers) Queue() *WorkQueue { return p.cfg.Queue }

// UpdateEffects is what the driver must do after UpdatePod.
type UpdateEffects struct {
	// NewWorker is set when the UID got a worker: the driver starts a loop
	// that calls Begin for every signal until the channel is closed.
	NewWorker <-chan struct{}
	// Cancel is the ID of the in-flight work whose context must be
	// cancelled, or 0.
	Cancel uint64
}

// UpdatePod records a request for a pod. It never blocks. Requests are
// coalesced: only the newest pending one is guaranteed to be seen, but a
// request that asks for termination is never lost.
func (p *PodWorkers) UpdatePod(opts UpdatePodOptions) UpdateEffects {
	var eff UpdateEffects
	pod := opts.Pod
	runtimeOnly := false
	if opts.RunningPod != nil {
		if opts.Pod == nil {
			if opts.UpdateType != UpdateKill {
				p.log.Error("runtime-only update must be a kill; dropped", "uid", opts.RunningPod.ID)
				return eff
			}
			runtimeOnly = true
			pod = podFromRunning(opts.RunningPod)
		} else {
			opts.RunningPod = nil
		}
	}
	if pod == nil {
		p.log.Error("update without a pod; dropped")
		return eff
	}
	uid := pod.UID

	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Clock.Now()

	status, known := p.statuses[uid]
	isNew := !known
	if isNew {
		status = &podSyncStatus{uid: uid, syncedAt: now, fullname: PodFullName(pod)}
		if !runtimeOnly && isTerminalPhase(pod.Status.Phase) && p.cfg.Cache != nil {
			if rs, err := p.cfg.Cache.Get(uid); err == nil && !rs.HasRunning() {
				status.terminatingAt, status.terminatedAt = now, now
				status.startedTerminating = true
			}
		}
		p.statuses[uid] = status
	}

	if runtimeOnly {
		status.observedRuntime = true
		var known *v1.Pod
		switch {
		case status.pending != nil && status.pending.Pod != nil:
			known = status.pending.Pod
		case status.active != nil && status.active.Pod != nil:
			known = status.active.Pod
		}
		if known != nil {
			pod = known
			opts.Pod, opts.RunningPod, runtimeOnly = known, nil, false
		}
	}

	if status.isTerminationRequested() && opts.UpdateType == UpdateCreate && !isNew {
		status.restartRequested = true
		eff.Cancel = status.syncToCancel()
		return eff
	}
	if status.finished {
		if k := opts.KillPodOptions; k != nil && k.CompletedCh != nil {
			close(k.CompletedCh)
		}
		return eff
	}

	becameTerminating := false
	if !status.isTerminationRequested() {
		switch {
		case runtimeOnly, pod.DeletionTimestamp != nil:
			status.deleted = true
			becameTerminating = true
		case isTerminalPhase(pod.Status.Phase):
			becameTerminating = true
		case opts.UpdateType == UpdateKill:
			status.evicted = opts.KillPodOptions != nil && opts.KillPodOptions.Evict
			becameTerminating = true
		}
		if becameTerminating {
			status.terminatingAt = now
		}
	}

	graceShortened := false
	switch status.workType() {
	case WorkTerminated:
		if runtimeOnly {
			return eff
		}
		if k := opts.KillPodOptions; k != nil && k.CompletedCh != nil {
			close(k.CompletedCh)
		}
		opts.KillPodOptions = nil
	case WorkTerminating:
		var override *int64
		k := KillPodOptions{}
		if opts.KillPodOptions != nil {
			k = *opts.KillPodOptions
			override = k.GracePeriodOverride
			if k.CompletedCh != nil {
				status.notifyPostTerminating = append(status.notifyPostTerminating, k.CompletedCh)
			}
			if k.PodStatusFunc != nil {
				status.statusPostTerminating = append(status.statusPostTerminating, k.PodStatusFunc)
			}
			status.evicted = status.evicted || k.Evict
			k.CompletedCh, k.PodStatusFunc = nil, nil
		}
		k.Evict = status.evicted
		grace, shortened := effectiveGracePeriod(status.gracePeriod, pod, override)
		status.gracePeriod, graceShortened = grace, shortened
		k.GracePeriodOverride = &grace
		opts.KillPodOptions = &k
	default:
		if k := opts.KillPodOptions; k != nil && k.CompletedCh != nil {
			close(k.CompletedCh)
		}
		opts.KillPodOptions = nil
	}

	if status.notify == nil {
		status.notify = make(chan struct{}, 1)
		eff.NewWorker = status.notify
		if IsStaticPod(pod) {
			p.waitingStatic[status.fullname] = append(p.waitingStatic[status.fullname], uid)
		}
	}

	if prev := status.pending; prev != nil && !prev.StartTime.IsZero() &&
		(opts.StartTime.IsZero() || prev.StartTime.Before(opts.StartTime)) {
		opts.StartTime = prev.StartTime
	}
	status.pending = &opts
	status.working = true
	status.signal()

	switch id := status.syncToCancel(); {
	case id != 0:
		eff.Cancel = id
	case (becameTerminating || graceShortened) && status.inflight != 0:
		eff.Cancel = status.inflight
		status.cancelled = status.inflight
	}
	return eff
}
