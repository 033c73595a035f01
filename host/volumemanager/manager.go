package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Config is what a Manager needs. Events and Metrics may be nil.
type Config struct {
	Plugins    Plugins
	Classifier Classifier
	Store      Store
	Clock      Clock
	Resolver   Resolver
	Events     Events
	Metrics    Metrics
	// Mounts, when set, is asked whether a publish the actual state holds
	// is still in place: at Reconstruct, and before WaitForAttachAndMount
	// says a pod's volumes are mounted (mounttable.go).
	Mounts MountTable
	// BootID is the kernel's ID of this boot; the records saved carry it,
	// and those of another boot have lost every mount.
	BootID string
	// Attachments, when set, says which volumes wait for the cluster to
	// attach them (attach.go).
	Attachments Attachments
}

// Metrics counts what operators watch. It must not block.
type Metrics interface {
	// ReconstructionFailed counts one failed reconstruction (or retry of
	// one) of a volume of plugin.
	ReconstructionFailed(plugin string)
}

// Manager is the driver of the reconciler: Run starts the operations
// Step returns, each on its own goroutine, saves the actual state before
// any of them reaches a plugin, and feeds the results back.
type Manager struct {
	cfg     Config
	mu      sync.Mutex
	r       *Reconciler
	changed chan struct{} // closed and replaced on every change
	wake    chan struct{}
	wg      sync.WaitGroup
	leases  map[*statsLease]struct{}
	recon   Reconstructor // set by Reconstruct, asked again by OpReconstruct
}

// NewManager returns a Manager with empty states.
func NewManager(cfg Config) *Manager {
	return &Manager{
		cfg:     cfg,
		r:       NewReconciler(cfg.Classifier),
		changed: make(chan struct{}),
		wake:    make(chan struct{}, 1),
		leases:  map[*statsLease]struct{}{},
	}
}

// Reconstruct rebuilds the actual state after a restart (see the function
// Reconstruct). Call it once, before Run. The state is restored even when
// some directories could not be rebuilt; their errors are returned.
func (m *Manager) Reconstruct(ctx context.Context, dirs DirLister, plugins Reconstructor) error {
	recs, err := m.cfg.Store.Load(ctx)
	if err != nil {
		return fmt.Errorf("loading volume records: %w", err)
	}
	found, err := dirs.PodVolumeDirs(ctx)
	if err != nil {
		return fmt.Errorf("listing pod volume directories: %w", err)
	}
	out, rerr := Reconstruct(ctx, m.checkRecords(ctx, recs), found, plugins)
	m.mu.Lock()
	m.recon = plugins
	m.r.Restore(m.cfg.Clock.Now(), out)
	m.mu.Unlock()
	for _, e := range reconstructErrors(rerr) {
		m.reportReconstruct(e)
	}
	return rerr
}

// reconstructErrors are the *ReconstructError in err (Reconstruct's).
func reconstructErrors(err error) []*ReconstructError {
	if re, ok := err.(*ReconstructError); ok {
		return []*ReconstructError{re}
	}
	var out []*ReconstructError
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			out = append(out, reconstructErrors(e)...)
		}
	}
	return out
}

// reportReconstruct gives the event and counts the metric of a failed
// reconstruction.
func (m *Manager) reportReconstruct(e *ReconstructError) {
	if m.cfg.Events != nil {
		typ, reason, msg := reconstructEvent(e)
		m.cfg.Events.Event(e.Dir.Pod, typ, reason, msg)
	}
	if m.cfg.Metrics != nil {
		m.cfg.Metrics.ReconstructionFailed(e.Dir.Plugin)
	}
}

// reconstruct asks the plugin again about op's placeholder.
func (m *Manager) reconstruct(ctx context.Context, op Op) {
	m.mu.Lock()
	recon := m.recon
	m.mu.Unlock()
	var ans Reconstructed
	err := errors.New("no reconstructor")
	if recon != nil {
		ans, err = ask(ctx, recon, op.Dir())
	}
	m.mu.Lock()
	m.r.Resolve(m.cfg.Clock.Now(), op, ans, err)
	m.mu.Unlock()
	var re *ReconstructError
	if errors.As(err, &re) {
		m.reportReconstruct(re)
	} else if err != nil {
		m.reportReconstruct(&ReconstructError{Dir: op.Dir(), Err: err})
	}
	m.poke()
}

// Unresolved is Reconciler.Unresolved.
func (m *Manager) Unresolved() []PodVolumeDir {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.r.Unresolved()
}

// MarkDesiredPopulated lets unpublish and unstage start (see
// Reconciler.MarkDesiredPopulated).
func (m *Manager) MarkDesiredPopulated() {
	m.mu.Lock()
	m.r.MarkDesiredPopulated()
	m.mu.Unlock()
	m.poke()
}

// Run reconciles until ctx is done, then waits for the operations in
// flight (their contexts are cancelled with ctx) and returns ctx.Err().
func (m *Manager) Run(ctx context.Context) error {
	defer m.wg.Wait()
	for {
		m.mu.Lock()
		now := m.cfg.Clock.Now()
		ops := m.r.Step(now)
		m.cutWaitingStats()
		var recs []Record
		dirty := m.r.Dirty()
		if dirty {
			recs = m.r.Records()
			for i := range recs {
				recs[i].Boot = m.cfg.BootID
			}
		}
		next, waits := m.r.NextRetry(now)
		m.mu.Unlock()
		var saveErr error
		if dirty {
			saveErr = m.cfg.Store.Save(ctx, recs)
		}
		for _, op := range ops {
			if saveErr != nil {
				m.complete(op, fmt.Errorf("%w: saving volume state: %w", ErrNotStarted, saveErr))
				continue
			}
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				switch op.Kind {
				case OpReconstruct:
					m.reconstruct(ctx, op)
					return
				case OpVerifyAttached:
					m.verifyAttached(ctx, op)
					return
				}
				m.complete(op, call(ctx, m.cfg.Plugins, op))
			}()
		}
		var timer <-chan time.Time
		if waits {
			timer = m.cfg.Clock.After(next.Sub(m.cfg.Clock.Now()))
			if !m.cfg.Clock.Now().Before(next) {
				continue // the retry came due while the timer was set
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.wake:
		case <-timer:
		}
	}
}

func (m *Manager) complete(op Op, err error) {
	m.mu.Lock()
	m.r.Complete(m.cfg.Clock.Now(), op, err)
	m.mu.Unlock()
	m.report(op, err)
	m.poke()
}

// report gives the event of op's result to the pods it concerns: its
// own, every pod that desires a device's volume, or the node's for an
// unstage.
func (m *Manager) report(op Op, err error) {
	m.mu.Lock()
	var pods []types.UID
	switch {
	case op.Pod != "":
		pods = []types.UID{op.Pod}
	case op.Kind == OpUnstage:
		pods = []types.UID{""} // the node's: no pod uses the device
	default:
		for uid := range m.r.desired {
			if m.r.wants(uid, op.Volume.ID) {
				pods = append(pods, uid)
			}
		}
	}
	m.mu.Unlock()
	if typ, reason, msg, ok := opEvent(op, err); ok && m.cfg.Events != nil {
		for _, uid := range pods {
			m.cfg.Events.Event(uid, typ, reason, msg)
		}
	}
}

// poke wakes Run and every waiter.
func (m *Manager) poke() {
	m.mu.Lock()
	close(m.changed)
	m.changed = make(chan struct{})
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// waitFor blocks until cond holds (checked under the lock after every
// change) or ctx is done; then it returns the context's error wrapped by
// failed's message.
func (m *Manager) waitFor(ctx context.Context, cond func() bool, failed func() error) error {
	for {
		m.mu.Lock()
		ok, ch := cond(), m.changed
		var err error
		if !ok && ctx.Err() != nil {
			err = failed()
		}
		m.mu.Unlock()
		if ok {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-ch:
		}
	}
}

// WaitForAttachAndMount adds pod to the desired state and waits, until
// ctx is done, for every volume of it to be mounted. A malformed volume
// spec fails at once with a FieldError.
func (m *Manager) WaitForAttachAndMount(ctx context.Context, pod *v1.Pod) error {
	if err := m.AddPod(ctx, pod); err != nil {
		// A claim not bound yet, or not found, is asked again on the
		// pod's next sync; the event says which.
		if m.cfg.Events != nil {
			m.cfg.Events.Event(pod.UID, "Warning", ReasonFailedMount, "Unable to attach or mount volumes: "+err.Error())
		}
		return err
	}
	for {
		err := m.waitFor(ctx, func() bool { return m.r.PodMounted(pod.UID) }, func() error {
			err := fmt.Errorf("unmounted volumes=%v of pod %s/%s: %w", m.r.UnmountedVolumes(pod.UID), pod.Namespace, pod.Name, ctx.Err())
			if last := m.r.LastError(pod.UID); last != nil {
				err = fmt.Errorf("%w (last error: %v)", err, last)
			}
			return err
		})
		if err != nil {
			return err
		}
		// Mounted in the state; a container starts on them only if the
		// mount table agrees (mounttable.go).
		lost := m.lostMounts(ctx, pod.UID)
		if len(lost) == 0 {
			return nil
		}
		m.remount(pod.UID, lost)
	}
}

// UnmountVolumes removes pod from the desired state and waits, until ctx
// is done, for every volume of it to be unpublished (for SyncTerminatedPod).
func (m *Manager) UnmountVolumes(ctx context.Context, pod *v1.Pod) error {
	m.mu.Lock()
	m.r.RemovePod(pod.UID)
	m.mu.Unlock()
	m.poke()
	return m.waitFor(ctx, func() bool { return m.r.PodVolumesUnmounted(pod.UID) }, func() error {
		return fmt.Errorf("volumes of pod %s/%s still mounted: %w", pod.Namespace, pod.Name, ctx.Err())
	})
}

// PodVolumesUnmounted reports whether no volume of pod uid is or may be
// published (the pod's directories may go).
func (m *Manager) PodVolumesUnmounted(uid types.UID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.r.PodVolumesUnmounted(uid)
}

// VolumesInUse is Reconciler.VolumesInUse.
func (m *Manager) VolumesInUse() []VolumeID {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.r.VolumesInUse()
}

// MountPod is WaitForAttachAndMount under the name of the lifecycle's
// Volumes contract, which Manager implements.
func (m *Manager) MountPod(ctx context.Context, pod *v1.Pod) error {
	return m.WaitForAttachAndMount(ctx, pod)
}

// UnmountPod is UnmountVolumes under the name of the lifecycle's Volumes
// contract.
func (m *Manager) UnmountPod(ctx context.Context, pod *v1.Pod) error {
	return m.UnmountVolumes(ctx, pod)
}
