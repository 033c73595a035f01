package volumemanager

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// ErrReconstructPending is wrapped by the error a pod's volume waits on
// while a placeholder of its plugin is not resolved.
var ErrReconstructPending = errors.New("waiting for the reconstruction of a volume of the plugin")

// fenced reports whether an unresolved placeholder of plugin holds the
// plugin's devices: FC and iSCSI have no attach fencing on the controller
// side, so a device of theirs that is wrongly thought unused may be
// mounted by another node and corrupted. Such a placeholder is never
// unpublished, and it holds the stages and unstages of the
// plugin's volumes until the plugin rebuilds it. The placeholders of other
// plugins are unpublished once their pod is gone (the kubelet's rule).
func fenced(plugin string) bool { return plugin == PluginFC || plugin == PluginISCSI }

// reconstructRetries returns the OpReconstruct of every pod entry of an
// unresolved placeholder, sorted.
func (r *Reconciler) reconstructRetries() []Op {
	var ops []Op
	for _, id := range sortedKeys(r.actual) {
		d := r.actual[id]
		if !d.vol.Unresolved {
			continue
		}
		for _, uid := range sortedKeys(d.pods) {
			ops = append(ops, Op{Kind: OpReconstruct, Volume: d.vol, Pod: uid, Name: d.pods[uid].name})
		}
	}
	return ops
}

// heldBy is the placeholder that holds the stage or unstage of v, or ""
// when none does: an unresolved placeholder of v's fenced plugin whose pod
// does not desire that volume name, so that the volume it stands for may
// be v. (A placeholder whose pod still desires the name stands for that
// pod's own volume, which the pod's publish confirms.)
func (r *Reconciler) heldBy(v Volume) VolumeID {
	if !fenced(v.Plugin) {
		return ""
	}
	for _, id := range sortedKeys(r.actual) {
		d := r.actual[id]
		if !d.vol.Unresolved || d.vol.Plugin != v.Plugin {
			continue
		}
		for uid, pm := range d.pods {
			if !r.wantsName(uid, pm.name) {
				return id
			}
		}
	}
	return ""
}

// Resolve records the answer of op, an OpReconstruct started by Step:
// on success the placeholder's pod joins the volume the plugin named
// (mounted as the plugin says, uncertain otherwise), and the placeholder
// goes once it has no pod left; when the plugin finds nothing mounted
// there (ErrNotMounted) the pod entry goes; on any other failure it
// stays, in back-off.
func (r *Reconciler) Resolve(now time.Time, op Op, ans Reconstructed, err error) {
	id := op.Volume.ID
	if cur, ok := r.inflight[id]; !ok || cur.seq != op.seq || op.Kind != OpReconstruct {
		return
	}
	delete(r.inflight, id)
	r.dirty = true
	ph := r.actual[id]
	if errors.Is(err, ErrNotMounted) && ph != nil {
		delete(r.backoff, op.key())
		delete(ph.pods, op.Pod) // nothing is published there
		return
	}
	if err != nil {
		var re *ReconstructError
		if !errors.As(err, &re) {
			err = &ReconstructError{Dir: op.Dir(), Err: err}
		}
		r.backoff[op.key()] = r.backoff[op.key()].failed(now)
		r.noteError(op, err)
		return
	}
	delete(r.backoff, op.key())
	if ph == nil || ph.pods[op.Pod] == nil {
		return
	}
	delete(ph.pods, op.Pod)
	r.join(ans, op.Pod, op.Name)
}

// join adds pod uid's directory name, rebuilt as ans, to the actual state.
// A pod entry already there (the pod's own publish ran) is kept.
func (r *Reconciler) join(ans Reconstructed, uid types.UID, name string) {
	d := r.actual[ans.Volume.ID]
	if d == nil {
		d = &device{vol: ans.Volume, state: NotMounted, pods: map[types.UID]*podMount{}}
		r.actual[ans.Volume.ID] = d
	}
	switch {
	case !d.vol.Shared || d.state == Mounted:
	case ans.Staged && d.state == NotMounted:
		d.state = Mounted
	case d.state == NotMounted:
		d.state, d.reconstructed = Uncertain, true
	}
	if d.pods[uid] != nil {
		return
	}
	pm := &podMount{name: name, state: Uncertain, reconstructed: true}
	if ans.Published {
		pm.state, pm.reconstructed = Mounted, false
	}
	d.pods[uid] = pm
}

// Unresolved are the pod volume directories that stand as unresolved
// placeholders, sorted by volume and pod.
func (r *Reconciler) Unresolved() []PodVolumeDir {
	var out []PodVolumeDir
	for _, op := range r.reconstructRetries() {
		out = append(out, op.Dir())
	}
	return out
}

// heldError is the error of a stage held by placeholder.
func heldError(v Volume, placeholder VolumeID) error {
	return fmt.Errorf("%w: %s stands for a device of %s that may be %s", ErrReconstructPending, placeholder, v.Plugin, v.ID)
}
