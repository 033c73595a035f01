package volumemanager

import (
	"context"
	"errors"
	"fmt"
)

// VolumeUsage is what a plugin reports of a published volume (the
// kubelet's volume stats): bytes and inodes of the volume's filesystem;
// a block volume has only CapacityBytes.
type VolumeUsage struct {
	CapacityBytes, AvailableBytes, UsedBytes int64
	Inodes, InodesFree, InodesUsed           int64
}

// ErrBadUsage is wrapped by Check's error: the answer cannot be true.
var ErrBadUsage = errors.New("implausible volume usage")

// ErrMetricsNotSupported is what a plugin's metrics call gives for a
// volume it has no metrics of (a backend without stats, the kubelet's
// NotSupported): the volume gets no stats, and no failure is counted.
var ErrMetricsNotSupported = errors.New("volume metrics not supported")

// Check returns nil for a usage that can be true, the plugin authors'
// "sane metrics": a positive capacity; no negative number; used plus
// available within the capacity (reserved blocks count in neither); the
// same for inodes, where a total of 0 (a filesystem that does not count
// inodes) needs used and free 0 too.
func (u VolumeUsage) Check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadUsage, fmt.Sprintf(format, args...))
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"capacity_bytes", u.CapacityBytes}, {"available_bytes", u.AvailableBytes}, {"used_bytes", u.UsedBytes},
		{"inodes", u.Inodes}, {"inodes_free", u.InodesFree}, {"inodes_used", u.InodesUsed},
	} {
		if f.v < 0 {
			return bad("%s is negative (%d)", f.name, f.v)
		}
	}
	switch {
	case u.CapacityBytes == 0:
		return bad("capacity_bytes is 0")
	case u.UsedBytes > u.CapacityBytes:
		return bad("used_bytes %d exceeds capacity_bytes %d", u.UsedBytes, u.CapacityBytes)
	case u.AvailableBytes > u.CapacityBytes-u.UsedBytes:
		return bad("used_bytes %d plus available_bytes %d exceed capacity_bytes %d", u.UsedBytes, u.AvailableBytes, u.CapacityBytes)
	case u.InodesUsed > u.Inodes:
		return bad("inodes_used %d exceeds inodes %d", u.InodesUsed, u.Inodes)
	case u.InodesFree > u.Inodes-u.InodesUsed:
		return bad("inodes_used %d plus inodes_free %d exceed inodes %d", u.InodesUsed, u.InodesFree, u.Inodes)
	}
	return nil
}

// statsEligible reports whether the plugin of pv may be asked for its
// usage now: a claim of a desired pod, published (and its device staged),
// with no operation in flight on the volume. A volume being unpublished
// or unstaged never is.
func (r *Reconciler) statsEligible(pv PodVolume) bool {
	if pv.Claim.Name == "" {
		return false
	}
	cur, ok := r.desired[pv.Pod][pv.Name]
	if !ok || cur.Volume.ID != pv.Volume.ID {
		return false
	}
	if _, busy := r.inflight[pv.Volume.ID]; busy {
		return false
	}
	d := r.actual[pv.Volume.ID]
	if d == nil || (pv.Volume.Shared && d.state != Mounted) {
		return false
	}
	pm := d.pods[pv.Pod]
	return pm != nil && pm.state == Mounted
}

// StatsTargets are the volumes whose usage may be asked for now (see
// statsEligible), sorted by pod and name. Volumes that are not claims
// (emptyDir, hostPath, inline CSI) are never among them: the kubelet
// reports volume stats per PersistentVolumeClaim.
func (r *Reconciler) StatsTargets() []PodVolume {
	var out []PodVolume
	for _, uid := range sortedKeys(r.desired) {
		for _, name := range sortedKeys(r.desired[uid]) {
			if pv := r.desired[uid][name]; r.statsEligible(pv) {
				out = append(out, pv)
			}
		}
	}
	return out
}

// HoldStats takes a stats lease on pv's volume when it is eligible: while
// any lease is held, Step starts no unpublish, unmap or unstage of the
// volume and marks it as waiting (StatsWaiting), so that the driver can
// cut the stats call short. Mounts are never held back.
func (r *Reconciler) HoldStats(pv PodVolume) bool {
	if !r.statsEligible(pv) {
		return false
	}
	r.statsHeld[pv.Volume.ID]++
	return true
}

// ReleaseStats gives back a lease HoldStats took.
func (r *Reconciler) ReleaseStats(id VolumeID) {
	if r.statsHeld[id]--; r.statsHeld[id] <= 0 {
		delete(r.statsHeld, id)
	}
}

// StatsWaiting reports whether the last Step held back a teardown of id
// for a stats lease.
func (r *Reconciler) StatsWaiting(id VolumeID) bool { return r.statsWaiting[id] }

// statsLease is one stats call in flight.
type statsLease struct {
	id     VolumeID
	cancel context.CancelFunc
}

// StatsTargets is Reconciler.StatsTargets.
func (m *Manager) StatsTargets() []PodVolume {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.r.StatsTargets()
}

// BeginStats takes a stats lease on pv (Reconciler.HoldStats) for one
// metrics call: the call runs under the returned context, which is
// cancelled when a teardown of the volume waits for it, and done must be
// called when the call returns. ok is false, and nothing is to be
// called, when pv may not be asked now.
func (m *Manager) BeginStats(ctx context.Context, pv PodVolume) (callCtx context.Context, done func(), ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.r.HoldStats(pv) {
		return nil, nil, false
	}
	callCtx, cancel := context.WithCancel(ctx)
	l := &statsLease{id: pv.Volume.ID, cancel: cancel}
	m.leases[l] = struct{}{}
	return callCtx, func() {
		cancel()
		m.mu.Lock()
		delete(m.leases, l)
		m.r.ReleaseStats(l.id)
		m.mu.Unlock()
		m.poke() // a teardown may wait for this lease
	}, true
}

// cutWaitingStats cancels the stats calls a teardown waits for. Called
// with m.mu held, after Step.
func (m *Manager) cutWaitingStats() {
	for l := range m.leases {
		if m.r.StatsWaiting(l.id) {
			l.cancel()
		}
	}
}

// Changes is closed at the next change of the states (a pod added or
// removed, an operation finished, a lease given back).
func (m *Manager) Changes() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}
