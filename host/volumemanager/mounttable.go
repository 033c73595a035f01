package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// MountTable tells whether a pod volume is still where its pod finds it.
type MountTable interface {
	// InPlace reports whether pv, which the actual state holds as
	// published, is still in place: for a volume mounted at its pod path
	// (a plugin's, a tmpfs emptyDir) that the path is a mount point.
	InPlace(ctx context.Context, pv PodVolume) (bool, error)
}

// ErrMountGone is wrapped by the error recorded for a publish that the
// mount table no longer shows (a reboot, or someone unmounted it).
var ErrMountGone = errors.New("not mounted at its pod path any more")

// The rule of the mount table: the actual state is what was done, the
// mount table what is. A publish the state holds but the table does not
// show is lost: its pod mount becomes uncertain, and so does its device's
// stage (staging again is idempotent; publishing on a stage that is gone
// would put the pod's data on the root disk). An uncertain mount of a
// desired pod is staged and published again; that of a pod that is gone
// is unpublished and unstaged. Records saved in another boot have lost
// everything they hold mounted.

// checkRecords applies the rule to the saved records before
// reconstruction.
func (m *Manager) checkRecords(ctx context.Context, recs []Record) []Record {
	for i := range recs {
		rec := &recs[i]
		rebooted := rec.Boot != "" && m.cfg.BootID != "" && rec.Boot != m.cfg.BootID
		for j := range rec.Pods {
			p := &rec.Pods[j]
			if p.State != Mounted || rec.Volume.Unresolved {
				continue
			}
			if !rebooted {
				if ok, _ := m.inPlace(ctx, PodVolume{Pod: p.Pod, Name: p.Name, Volume: rec.Volume}); ok {
					continue
				}
			}
			p.State = Uncertain
			if rec.Device == Mounted {
				rec.Device = Uncertain
			}
		}
		if rebooted && rec.Device == Mounted {
			rec.Device = Uncertain
		}
	}
	return recs
}

// inPlace asks the mount table about pv; without one everything is.
func (m *Manager) inPlace(ctx context.Context, pv PodVolume) (bool, error) {
	if m.cfg.Mounts == nil || pv.Volume.Unresolved {
		return true, nil
	}
	return m.cfg.Mounts.InPlace(ctx, pv)
}

// lostMounts are the desired volumes of pod uid that the mount table does
// not show, each with its error.
func (m *Manager) lostMounts(ctx context.Context, uid types.UID) map[string]error {
	if m.cfg.Mounts == nil {
		return nil
	}
	m.mu.Lock()
	vols := make([]PodVolume, 0, len(m.r.desired[uid]))
	for _, pv := range m.r.desired[uid] {
		vols = append(vols, pv)
	}
	m.mu.Unlock()
	lost := map[string]error{}
	for _, pv := range vols {
		ok, err := m.inPlace(ctx, pv)
		switch {
		case err != nil:
			lost[pv.Name] = fmt.Errorf("%w: reading the mount table: %w", ErrMountGone, err)
		case !ok:
			lost[pv.Name] = ErrMountGone
		}
	}
	return lost
}

// MountLost records that pod uid's publish of volume name is not in
// place (the rule above): its mount, and a shared volume's stage, become
// uncertain, and its publish waits out a back-off step, so that a plugin
// whose publish mounts nothing is not called in a loop.
func (r *Reconciler) MountLost(now time.Time, uid types.UID, name string, err error) {
	pv, ok := r.desired[uid][name]
	if !ok {
		return
	}
	d := r.actual[pv.Volume.ID]
	if d == nil || d.pods[uid] == nil || d.pods[uid].state != Mounted {
		return
	}
	d.pods[uid].state, d.pods[uid].reconstructed = Uncertain, true
	if d.vol.Shared && d.state == Mounted {
		d.state, d.reconstructed = Uncertain, true
	}
	op := Op{Kind: publishKind(pv.Volume), Volume: pv.Volume, Pod: uid, Name: name}
	r.backoff[op.key()] = r.backoff[op.key()].failed(now)
	r.noteError(op, err)
	r.dirty = true
}

// remount records the lost mounts of pod uid and reports them.
func (m *Manager) remount(uid types.UID, lost map[string]error) {
	m.mu.Lock()
	now := m.cfg.Clock.Now()
	var ops []Op
	for _, name := range sortedKeys(lost) {
		m.r.MountLost(now, uid, name, lost[name])
		if pv, ok := m.r.desired[uid][name]; ok {
			ops = append(ops, Op{Kind: publishKind(pv.Volume), Volume: pv.Volume, Pod: uid, Name: name, Args: pv.Args})
		}
	}
	m.mu.Unlock()
	if m.cfg.Events != nil {
		for _, op := range ops {
			if typ, reason, msg, ok := opEvent(op, fmt.Errorf("%w (%v); it is staged and published again", ErrMountGone, lost[op.Name])); ok {
				m.cfg.Events.Event(uid, typ, reason, msg)
			}
		}
	}
	m.poke()
}
