package volumemanager

import (
	"cmp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// PodMounted reports whether every desired volume of pod uid is published
// (and its device staged).
func (r *Reconciler) PodMounted(uid types.UID) bool {
	vols, ok := r.desired[uid]
	return ok && len(r.unmounted(uid, vols)) == 0
}

// UnmountedVolumes are the spec names of the desired volumes of pod uid
// that are not mounted yet, sorted.
func (r *Reconciler) UnmountedVolumes(uid types.UID) []string {
	return r.unmounted(uid, r.desired[uid])
}

func (r *Reconciler) unmounted(uid types.UID, vols map[string]PodVolume) []string {
	var out []string
	for _, name := range sortedKeys(vols) {
		v := vols[name].Volume
		d := r.actual[v.ID]
		if d == nil || (v.Shared && d.state != Mounted) || d.pods[uid] == nil || d.pods[uid].state != Mounted {
			out = append(out, name)
		}
	}
	return out
}

// LastError is the last error of an operation for pod uid's volumes, or nil.
func (r *Reconciler) LastError(uid types.UID) error { return r.lastErr[uid] }

// PodVolumesUnmounted reports whether no volume of pod uid is, or may be,
// published, and no operation for the pod is in flight. Until it is true
// the pod's directories must stay.
func (r *Reconciler) PodVolumesUnmounted(uid types.UID) bool {
	for _, d := range r.actual {
		if d.pods[uid] != nil {
			return false
		}
	}
	for _, op := range r.inflight {
		if op.Pod == uid {
			return false
		}
	}
	return true
}

// VolumesInUse are the shared volumes that are desired (from before their
// stage starts) or may still be staged or published (until an unstage
// succeeded), and every placeholder of a failed reconstruction: the
// volumes that must not be detached from this node, as node.status.
// volumesInUse reports them. Sorted.
func (r *Reconciler) VolumesInUse() []VolumeID {
	set := map[VolumeID]bool{}
	for _, vols := range r.desired {
		for _, pv := range vols {
			if pv.Volume.Shared {
				set[pv.Volume.ID] = true
			}
		}
	}
	for id, d := range r.actual {
		_, busy := r.inflight[id]
		if d.vol.Unresolved || (d.vol.Shared && (d.state != NotMounted || len(d.pods) > 0 || busy)) {
			set[id] = true
		}
	}
	return sortedKeys(set)
}

// Dirty reports whether the actual state changed since the last Records.
func (r *Reconciler) Dirty() bool { return r.dirty }

// Records is the actual state to save, sorted by volume and pod. An
// operation in flight counts as uncertain, so that a host that dies
// during the call cleans up after it.
func (r *Reconciler) Records() []Record {
	r.dirty = false
	var out []Record
	for _, id := range sortedKeys(r.actual) {
		d := r.actual[id]
		rec := Record{Volume: d.vol, Device: d.state}
		op, busy := r.inflight[id]
		if busy && op.Pod == "" && op.Kind != OpVerifyAttached && rec.Device != Mounted {
			rec.Device = Uncertain
		}
		if busy && op.Kind == OpUnstage {
			rec.Device = Uncertain
		}
		for _, uid := range sortedKeys(d.pods) {
			pm := d.pods[uid]
			st := pm.state
			if busy && op.Pod == uid {
				st = Uncertain
			}
			rec.Pods = append(rec.Pods, PodRecord{Pod: uid, Name: pm.name, State: st})
		}
		if busy && op.Pod != "" && d.pods[op.Pod] == nil {
			rec.Pods = append(rec.Pods, PodRecord{Pod: op.Pod, Name: op.Name, State: Uncertain})
			slices.SortFunc(rec.Pods, func(a, b PodRecord) int { return cmp.Compare(a.Pod, b.Pod) })
		}
		out = append(out, rec)
	}
	return out
}

// Restore replaces the actual state with recs, as Reconstruct returns
// them. Mounted entries stay mounted (nothing is mounted again); uncertain
// ones are marked as found by reconstruction, so that a final error of a
// new mount attempt keeps them uncertain (T5, T12).
//
// The placeholders of failed reconstructions count as failed once at now:
// the reconstruct retries start after the first back-off.
func (r *Reconciler) Restore(now time.Time, recs []Record) {
	r.actual = map[VolumeID]*device{}
	for _, rec := range recs {
		if rec.Volume.Unresolved {
			for _, p := range rec.Pods {
				k := Op{Kind: OpReconstruct, Volume: rec.Volume, Pod: p.Pod}.key()
				r.backoff[k] = r.backoff[k].failed(now)
			}
		}
		d := &device{vol: rec.Volume, state: rec.Device, reconstructed: rec.Device == Uncertain, pods: map[types.UID]*podMount{}}
		for _, p := range rec.Pods {
			if p.State == NotMounted {
				continue
			}
			d.pods[p.Pod] = &podMount{name: p.Name, state: p.State, reconstructed: p.State == Uncertain}
		}
		r.actual[rec.Volume.ID] = d
	}
	r.dirty = true
}
