package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Attachments tells which volumes the cluster attaches to the node and
// whether it has, as the kubelet's controller-attached volumes: host/node
// implements it over the API server (a CSI driver's CSIDriver object and
// VolumeAttachment); nil outside Kubernetes mode, where no volume waits.
//
// A volume with Attach is staged or published only when both hold: it
// was reported in node.status.volumesInUse (MarkVolumesReportedInUse), so
// that the attach/detach controller cannot detach it while it is being
// staged, and Attached found its attachment. Until then the pod waits;
// the check is retried with the operations' back-off.
type Attachments interface {
	// AttachRequired reports whether v, a shared volume of pod, is
	// attached by the cluster before it may be staged.
	AttachRequired(ctx context.Context, pod *v1.Pod, v Volume) (bool, error)
	// Attached returns the publish context of v's attachment to the node,
	// or an error (wrapping ErrNotAttached while the attachment is
	// missing or not attached yet).
	Attached(ctx context.Context, v Volume) (map[string]string, error)
}

// ErrNotAttached is wrapped by the error of a volume the cluster has not
// attached to the node yet.
var ErrNotAttached = errors.New("not attached to the node yet")

// ErrNotReportedInUse is the last error of a pod whose volume waits to be
// reported in node.status.volumesInUse before its attachment is checked.
var ErrNotReportedInUse = errors.New("not yet reported in the node's volumesInUse")

// MarkVolumesReportedInUse takes the volumes in use that the API server
// accepted in the node's status: the only ones whose attachment is
// checked (replacing the set before).
func (r *Reconciler) MarkVolumesReportedInUse(ids []VolumeID) {
	clear(r.reported)
	for _, id := range ids {
		r.reported[id] = true
	}
}

// verifyAttached starts the check of v's attachment for pod uid, once v
// was reported in use.
func (r *Reconciler) verifyAttached(uid types.UID, v Volume, start func(Op)) {
	if !r.reported[v.ID] {
		r.lastErr[uid] = fmt.Errorf("volume %s: %w", v.ID, ErrNotReportedInUse)
		return
	}
	start(Op{Kind: OpVerifyAttached, Volume: v})
}

// Attached records the answer to op, an OpVerifyAttached started by Step:
// the publish context of the volume's attachment, or the error that says
// why it is not attached (retried with back-off).
func (r *Reconciler) Attached(now time.Time, op Op, publishContext map[string]string, err error) {
	id := op.Volume.ID
	if cur, ok := r.inflight[id]; !ok || cur.seq != op.seq {
		return
	}
	delete(r.inflight, id)
	r.dirty = true
	if err != nil {
		r.backoff[op.key()] = r.backoff[op.key()].failed(now)
		r.noteError(op, err)
		return
	}
	delete(r.backoff, op.key())
	d := r.actual[id]
	d.attached, d.publishContext = true, publishContext
}

// requireAttach sets Attach on the shared volumes of pod that the
// cluster attaches.
func requireAttach(ctx context.Context, a Attachments, pod *v1.Pod, vols []PodVolume) error {
	for i := range vols {
		v := &vols[i].Volume
		if !v.Shared {
			continue
		}
		need, err := a.AttachRequired(ctx, pod, *v)
		if err != nil {
			return fmt.Errorf("volume %q: whether %s needs attaching: %w", vols[i].Name, v.ID, err)
		}
		v.Attach = need
	}
	return nil
}

// verifyAttached runs op, an OpVerifyAttached, and records its answer.
func (m *Manager) verifyAttached(ctx context.Context, op Op) {
	var pc map[string]string
	err := errors.New("no attachments on this host")
	if m.cfg.Attachments != nil {
		pc, err = m.cfg.Attachments.Attached(ctx, op.Volume)
	}
	m.mu.Lock()
	m.r.Attached(m.cfg.Clock.Now(), op, pc, err)
	m.mu.Unlock()
	m.report(op, err)
	m.poke()
}

// MarkVolumesReportedInUse is Reconciler.MarkVolumesReportedInUse.
func (m *Manager) MarkVolumesReportedInUse(ids []VolumeID) {
	m.mu.Lock()
	m.r.MarkVolumesReportedInUse(ids)
	m.mu.Unlock()
	m.poke()
}
