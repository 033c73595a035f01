package volumemanager

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// AddPod adds pod to the desired state without waiting for its volumes:
// the host calls it, after a restart, for every pod that may still run,
// before MarkDesiredPopulated, so that the volumes such a pod uses are
// never unpublished before its pod worker calls WaitForAttachAndMount.
// A malformed volume spec gives a FieldError and adds nothing.
func (m *Manager) AddPod(ctx context.Context, pod *v1.Pod) error {
	vols, err := DesiredVolumes(ctx, pod, m.cfg.Resolver)
	if err == nil && m.cfg.Attachments != nil {
		err = requireAttach(ctx, m.cfg.Attachments, pod, vols)
	}
	if err != nil {
		return fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	m.mu.Lock()
	m.r.SetPod(pod.UID, vols)
	m.mu.Unlock()
	m.poke()
	return nil
}

// DesiredVolume is the volume name of pod uid as the desired state holds
// it (its plugin and source resolved, a claim's volume included); ok is
// false when the pod or the volume is not desired.
func (m *Manager) DesiredVolume(uid types.UID, name string) (pv PodVolume, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pv, ok = m.r.desired[uid][name]
	return pv, ok
}
