package volumemanager

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Reconciler holds the desired and actual state of world and decides the
// operations that bring one to the other. It is not safe for concurrent
// use; Manager serialises the calls.
type Reconciler struct {
	classify  Classifier
	desired   map[types.UID]map[string]PodVolume // pod → spec name → volume
	actual    map[VolumeID]*device
	inflight  map[VolumeID]Op
	backoff   map[opKey]backoff
	lastErr   map[types.UID]error
	reported  map[VolumeID]bool // in node.status.volumesInUse (MarkVolumesReportedInUse)
	populated bool
	seq       uint64
	dirty     bool

	// statsHeld counts the stats leases per volume; statsWaiting are the
	// volumes whose teardown the last Step held back for one.
	statsHeld    map[VolumeID]int
	statsWaiting map[VolumeID]bool
}

// NewReconciler returns a reconciler with empty states that classifies
// plugin errors with c.
func NewReconciler(c Classifier) *Reconciler {
	return &Reconciler{
		classify: c,
		desired:  map[types.UID]map[string]PodVolume{},
		actual:   map[VolumeID]*device{},
		inflight: map[VolumeID]Op{},
		backoff:  map[opKey]backoff{},
		lastErr:  map[types.UID]error{},
		reported: map[VolumeID]bool{},

		statsHeld:    map[VolumeID]int{},
		statsWaiting: map[VolumeID]bool{},
	}
}

// SetPod makes vols the desired volumes of pod uid.
func (r *Reconciler) SetPod(uid types.UID, vols []PodVolume) {
	m := make(map[string]PodVolume, len(vols))
	for _, pv := range vols {
		pv.Pod = uid
		m[pv.Name] = pv
	}
	r.desired[uid] = m
}

// RemovePod drops pod uid from the desired state: its volumes are
// unpublished from the next Step on.
func (r *Reconciler) RemovePod(uid types.UID) {
	delete(r.desired, uid)
	delete(r.lastErr, uid)
	for k := range r.backoff {
		if k.pod == uid && k.kind.mounts() {
			delete(r.backoff, k)
		}
	}
}

// MarkDesiredPopulated says every pod source has been read once since the
// start. Until then nothing is unpublished or unstaged, so that a restart
// never tears down what a running pod uses before that pod is known.
func (r *Reconciler) MarkDesiredPopulated() { r.populated = true }

// Step returns the operations to start at now: unpublishes of pods no
// longer desired first, then stages and publishes for desired pods, then
// unstages of devices nobody uses. A volume with an operation in flight,
// or an operation in back-off, is skipped.
func (r *Reconciler) Step(now time.Time) []Op {
	var ops []Op
	clear(r.statsWaiting)
	start := func(op Op) {
		id := op.Volume.ID
		if _, busy := r.inflight[id]; busy {
			return
		}
		if !op.Kind.mounts() && op.Kind != OpVerifyAttached && r.statsHeld[id] > 0 {
			r.statsWaiting[id] = true // a stats call first (HoldStats)
			return
		}
		if b, ok := r.backoff[op.key()]; ok && now.Before(b.retryAt) {
			return
		}
		r.seq++
		op.seq = r.seq
		r.inflight[id] = op
		if r.actual[id] == nil {
			r.actual[id] = &device{vol: op.Volume, pods: map[types.UID]*podMount{}}
		}
		r.dirty = true
		ops = append(ops, op)
	}
	if r.populated {
		for _, id := range sortedKeys(r.actual) {
			d := r.actual[id]
			for _, uid := range sortedKeys(d.pods) {
				pm := d.pods[uid]
				if d.vol.Unresolved && (fenced(d.vol.Plugin) || r.wantsName(uid, pm.name)) {
					continue // the pod's own volume uses this target (2.8 step 7)
				}
				if pm.state != NotMounted && !r.wants(uid, id) {
					start(Op{Kind: unpublishKind(d.vol), Volume: d.vol, Pod: uid, Name: pm.name})
				}
			}
		}
	}
	for _, op := range r.reconstructRetries() {
		start(op)
	}
	for _, uid := range sortedKeys(r.desired) {
		for _, name := range sortedKeys(r.desired[uid]) {
			pv := r.desired[uid][name]
			v := pv.Volume
			d := r.actual[v.ID]
			stage := v.Shared && (d == nil || d.state != Mounted)
			if stage {
				if ph := r.heldBy(v); ph != "" {
					r.lastErr[uid] = heldError(v, ph)
					continue
				}
			} else if d != nil && d.pods[uid] != nil && d.pods[uid].state == Mounted {
				continue
			}
			if v.Attach {
				if d == nil || !d.attached {
					r.verifyAttached(uid, v, start)
					continue
				}
				v.PublishContext = d.publishContext
			}
			if stage {
				start(Op{Kind: OpStage, Volume: v})
				continue
			}
			start(Op{Kind: publishKind(v), Volume: v, Pod: uid, Name: name, Args: pv.Args})
		}
	}
	if r.populated {
		for _, id := range sortedKeys(r.actual) {
			d := r.actual[id]
			if _, busy := r.inflight[id]; busy || len(d.pods) > 0 || r.inDesired(id) {
				continue
			}
			if d.state == NotMounted {
				delete(r.actual, id)
				for k := range r.backoff {
					if k.vol == id {
						delete(r.backoff, k)
					}
				}
				r.dirty = true
				continue
			}
			if r.heldBy(d.vol) != "" {
				continue
			}
			start(Op{Kind: OpUnstage, Volume: d.vol})
		}
	}
	return ops
}

// Complete records the result of op, started by Step; err is nil on
// success. A completion of an operation this reconciler no longer has in
// flight (one started before a restart) is ignored.
//
// An OpReconstruct or OpVerifyAttached completed here failed with err
// (Resolve and Attached take their answers).
func (r *Reconciler) Complete(now time.Time, op Op, err error) {
	if op.Kind == OpReconstruct {
		if err == nil {
			err = errors.New("no answer")
		}
		r.Resolve(now, op, Reconstructed{}, err)
		return
	}
	if op.Kind == OpVerifyAttached {
		if err == nil {
			err = errors.New("no answer")
		}
		r.Attached(now, op, nil, err)
		return
	}
	id := op.Volume.ID
	if cur, ok := r.inflight[id]; !ok || cur.seq != op.seq {
		return
	}
	delete(r.inflight, id)
	r.dirty = true
	d := r.actual[id]
	class := Final
	if err == nil {
		delete(r.backoff, op.key())
	} else {
		class = Transient
		if !errors.Is(err, ErrNotStarted) {
			class = r.classify.Classify(err)
		}
		r.backoff[op.key()] = r.backoff[op.key()].failed(now)
		r.noteError(op, err)
	}
	switch op.Kind {
	case OpStage:
		stageResult(d, err, class)
	case OpPublish, OpMap:
		publishResult(d, op, err, class)
		if err == nil {
			r.dropPlaceholder(op.Pod, op.Name, id)
		}
	case OpUnpublish, OpUnmap:
		switch pm := d.pods[op.Pod]; {
		case err == nil:
			delete(d.pods, op.Pod) // T16
		case class != Transient && pm != nil:
			pm.state = Uncertain // T15
		}
	case OpUnstage:
		switch {
		case err == nil:
			d.state, d.reconstructed = NotMounted, false // T18
		case class != Transient:
			d.state = Uncertain // T17: the next pod stages again
		}
	}
}

// stageResult applies T1–T7.
func stageResult(d *device, err error, class Class) {
	switch {
	case err == nil:
		d.state, d.reconstructed = Mounted, false // T1
	case class == UncertainError:
		d.state = Uncertain // T2, T3
	case class == Final && d.state == Uncertain && !d.reconstructed:
		d.state = NotMounted // T4; T5 keeps a reconstructed device uncertain
	}
}

// publishResult applies T9–T13.
func publishResult(d *device, op Op, err error, class Class) {
	pm := d.pods[op.Pod]
	switch {
	case err == nil:
		d.pods[op.Pod] = &podMount{name: op.Name, state: Mounted} // T9
		if d.vol.Unresolved {
			d.vol = op.Volume
		}
	case class == UncertainError && pm == nil:
		d.pods[op.Pod] = &podMount{name: op.Name, state: Uncertain} // T10
	case class == Final && pm != nil && pm.state == Uncertain && !pm.reconstructed:
		delete(d.pods, op.Pod) // T11; T12 keeps a reconstructed mount
	}
}

func (r *Reconciler) noteError(op Op, err error) {
	err = fmt.Errorf("%s: %w", op, err)
	if op.Pod != "" {
		if _, ok := r.desired[op.Pod]; ok {
			r.lastErr[op.Pod] = err
		}
		return
	}
	for uid := range r.desired {
		if r.wants(uid, op.Volume.ID) {
			r.lastErr[uid] = err
		}
	}
}

func (r *Reconciler) wants(uid types.UID, id VolumeID) bool {
	for _, pv := range r.desired[uid] {
		if pv.Volume.ID == id {
			return true
		}
	}
	return false
}

// wantsName reports whether pod uid desires a volume of that spec name.
func (r *Reconciler) wantsName(uid types.UID, name string) bool {
	_, ok := r.desired[uid][name]
	return ok
}

// dropPlaceholder forgets the unresolved placeholder of pod uid's volume
// name once the pod's own volume (id) is published at that target.
func (r *Reconciler) dropPlaceholder(uid types.UID, name string, id VolumeID) {
	for pid, d := range r.actual {
		if pm := d.pods[uid]; pid != id && d.vol.Unresolved && pm != nil && pm.name == name {
			delete(d.pods, uid)
		}
	}
}

func (r *Reconciler) inDesired(id VolumeID) bool {
	for uid := range r.desired {
		if r.wants(uid, id) {
			return true
		}
	}
	return false
}

// NextRetry is the earliest time after now at which an operation in
// back-off may start again; ok is false when nothing waits.
func (r *Reconciler) NextRetry(now time.Time) (t time.Time, ok bool) {
	for _, b := range r.backoff {
		if b.retryAt.After(now) && (!ok || b.retryAt.Before(t)) {
			t, ok = b.retryAt, true
		}
	}
	return t, ok
}
