package lifecycle

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Workers is the driver of the pod worker: one goroutine per UID performs
// the work the core hands out and feeds back the results. It implements
// PodWorkerSet. Goroutines start only inside Run.
type Workers struct {
	core     *PodWorkers
	syncer   PodSyncer
	cache    *Cache
	recorder Recorder

	// Inspect, when set before Run, is called after every sync with the
	// synced pod, unless the sync finished it; it must not block (PLEG.Request). The next sync of a pod
	// needs a runtime status of that pod newer than the end of this one;
	// asking the PLEG to inspect the pod at once, rather than waiting for
	// its next relist, saves that wait (up to a relist period on every
	// start and every termination), and inspecting only that pod spares a
	// listing of the whole node.
	Inspect func(PodRef)
	// Released, when set before Run, is called instead of Inspect after
	// a sync that finished its pod (PLEG.Release): the runtime's events
	// held while it ran are then judged on their own.
	Released func(PodRef)

	mu      sync.Mutex
	cancels map[uint64]context.CancelFunc
	// syncing counts the syncs in flight by UID (at most one each).
	syncMu  sync.Mutex
	syncing map[types.UID]int
	pending []workerLoop
	spawn   chan struct{}
	wg      sync.WaitGroup
}

type workerLoop struct {
	uid    types.UID
	notify <-chan struct{}
}

// NewWorkers returns a driver for the core. recorder may be nil.
func NewWorkers(core *PodWorkers, syncer PodSyncer, cache *Cache, recorder Recorder) *Workers {
	return &Workers{
		core: core, syncer: syncer, cache: cache, recorder: recorder,
		cancels: map[uint64]context.CancelFunc{},
		syncing: map[types.UID]int{},
		spawn:   make(chan struct{}, 1),
	}
}

// Core returns the deterministic core, for queries.
func (w *Workers) Core() *PodWorkers { return w.core }

// UpdatePod hands a request to the core, cancels the in-flight sync it
// supersedes and schedules a worker goroutine for a new UID.
func (w *Workers) UpdatePod(opts UpdatePodOptions) {
	w.mu.Lock()
	defer w.mu.Unlock()
	eff := w.core.UpdatePod(opts)
	if eff.Cancel != 0 {
		w.cancelLocked(eff.Cancel)
	}
	if eff.NewWorker != nil {
		uid := types.UID("")
		if opts.Pod != nil {
			uid = opts.Pod.UID
		} else if opts.RunningPod != nil {
			uid = opts.RunningPod.ID
		}
		w.pending = append(w.pending, workerLoop{uid: uid, notify: eff.NewWorker})
		select {
		case w.spawn <- struct{}{}:
		default:
		}
	}
}

// SyncKnownPods forwards to the core and cancels the in-flight syncs of
// the orphans it made terminate.
func (w *Workers) SyncKnownPods(desired []*v1.Pod) map[types.UID]PodWorkerSync {
	w.mu.Lock()
	defer w.mu.Unlock()
	known, cancel := w.core.SyncKnownPods(desired)
	for _, id := range cancel {
		w.cancelLocked(id)
	}
	return known
}

// cancelLocked cancels the context of an in-flight work; w.mu is held.
func (w *Workers) cancelLocked(id uint64) {
	if cancel := w.cancels[id]; cancel != nil {
		cancel()
	}
}

// IsPodKnownTerminated forwards to the core.
func (w *Workers) IsPodKnownTerminated(uid types.UID) bool { return w.core.IsPodKnownTerminated(uid) }

// IsPodTerminationRequested forwards to the core.
func (w *Workers) IsPodTerminationRequested(uid types.UID) bool {
	return w.core.IsPodTerminationRequested(uid)
}

// IsPodForMirrorPodTerminatingByFullName forwards to the core.
func (w *Workers) IsPodForMirrorPodTerminatingByFullName(fullname string) bool {
	return w.core.IsPodForMirrorPodTerminatingByFullName(fullname)
}

// Run starts a goroutine per worker until ctx ends, then waits for all of
// them to return.
func (w *Workers) Run(ctx context.Context) {
	defer w.wg.Wait()
	for {
		w.mu.Lock()
		loops := w.pending
		w.pending = nil
		w.mu.Unlock()
		for _, l := range loops {
			w.wg.Add(1)
			go func() {
				defer w.wg.Done()
				w.loop(ctx, l)
			}()
		}
		select {
		case <-ctx.Done():
			return
		case <-w.spawn:
		}
	}
}

func (w *Workers) loop(ctx context.Context, l workerLoop) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-l.notify:
			if !ok {
				return
			}
		}
		w.mu.Lock()
		work, outcome := w.core.Begin(l.uid)
		if outcome != BeginRun {
			w.mu.Unlock()
			if outcome == BeginExit {
				return
			}
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		w.cancels[work.ID] = cancel
		w.mu.Unlock()

		res := w.perform(wctx, work)

		w.mu.Lock()
		delete(w.cancels, work.ID)
		cancel()
		exit := w.core.Complete(work, res)
		w.mu.Unlock()
		// A pod whose SyncTerminatedPod succeeded is finished: no work of
		// it waits for a newer status, so nothing is inspected for it.
		switch {
		case work.WorkType != WorkTerminated || res.Err != nil:
			if w.Inspect != nil {
				w.Inspect(work.podRef())
			}
		case w.Released != nil:
			w.Released(work.podRef())
		}
		if exit {
			return
		}
	}
}

func (w *Workers) setSyncing(uid types.UID, d int) {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	if w.syncing[uid] += d; w.syncing[uid] <= 0 {
		delete(w.syncing, uid)
	}
}

// Syncing reports whether a sync of the pod is in flight (PLEG.Busy).
func (w *Workers) Syncing(uid types.UID) bool {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	return w.syncing[uid] > 0
}

// perform makes the sync* call of one work, reading a fresh enough status.
// The pod counts as syncing (Syncing) from the status read to the sync
// call's return, which comes before the inspection after it is asked for:
// an event request the PLEG held meanwhile is served with that one. The
// wait for a fresh status does not count: the inspection it waits for
// must not be held.
func (w *Workers) perform(ctx context.Context, work Work) WorkResult {
	if work.RuntimeOnly() {
		w.setSyncing(work.UID, 1)
		defer w.setSyncing(work.UID, -1)
		return WorkResult{Err: w.syncer.SyncTerminatingRuntimePod(ctx, work.RunningPod)}
	}
	status, err := w.cache.GetNewerThan(ctx, work.UID, work.StatusNewerThan)
	if err != nil {
		if ctx.Err() == nil && w.recorder != nil {
			w.recorder.Event(work.Pod, EventWarning, "FailedSync", "error determining status: "+err.Error())
		}
		return WorkResult{Err: fmt.Errorf("determining pod status: %w", err)}
	}
	w.setSyncing(work.UID, 1)
	defer w.setSyncing(work.UID, -1)
	switch work.WorkType {
	case WorkTerminated:
		return WorkResult{Err: w.syncer.SyncTerminatedPod(ctx, work.Pod, status)}
	case WorkTerminating:
		return WorkResult{Err: w.syncer.SyncTerminatingPod(ctx, work.Pod, status, work.GracePeriod, work.StatusFunc)}
	}
	terminal, err := w.syncer.SyncPod(ctx, work.UpdateType, work.Pod, work.MirrorPod, status)
	return WorkResult{IsTerminal: terminal, Err: err}
}

// podRef names the pod of a work for an inspection.
func (w Work) podRef() PodRef {
	switch {
	case w.Pod != nil:
		return PodRef{UID: w.UID, Name: w.Pod.Name, Namespace: w.Pod.Namespace}
	case w.RunningPod != nil:
		return PodRef{UID: w.UID, Name: w.RunningPod.Name, Namespace: w.RunningPod.Namespace}
	}
	return PodRef{UID: w.UID}
}

var _ PodWorkerSet = (*Workers)(nil)
