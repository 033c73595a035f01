package node

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/sources"
)

// mirrorSyncer hands SyncPod the static pod's current mirror pod from the
// API server (the workers carry none: no source sends mirror pods), so
// that the Syncer creates a missing mirror and replaces an outdated one.
type mirrorSyncer struct {
	lifecycle.PodSyncer
	desired *desiredSet
}

func (s mirrorSyncer) SyncPod(ctx context.Context, updateType lifecycle.UpdateType, pod, mirror *v1.Pod, status *lifecycle.PodStatus) (bool, error) {
	if mirror == nil && lifecycle.IsStaticPod(pod) {
		mirror, _ = s.desired.apiMirror(pod)
	}
	return s.PodSyncer.SyncPod(ctx, updateType, pod, mirror, status)
}

// staticWithMirror returns the UID of the static pod desired under
// namespace/name and its mirror in the API server, when both exist.
func (s routedSink) staticWithMirror(namespace, name string) (types.UID, *v1.Pod, bool) {
	o, ok := s.desired.originOf(namespace, name)
	if !ok || o.Source == sources.SourceAPIServer || o.Source == sources.SourceAPI {
		return "", nil, false
	}
	m, ok := s.kube.source.Mirror(namespace, name)
	if !ok {
		return "", nil, false
	}
	for _, p := range s.desired.podsNamed(namespace, name) {
		return p.UID, m, true
	}
	return "", nil, false
}

// podsNamed returns the desired pods under namespace/name (one, or none).
func (d *desiredSet) podsNamed(namespace, name string) []*v1.Pod {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []*v1.Pod
	for _, p := range d.pods {
		if p.Namespace == namespace && p.Name == name {
			out = append(out, p)
		}
	}
	return out
}

// mirrorSyncs asks a sync of every static pod whose mirror pod changed in
// the API server since the last call (created, deleted, marked for
// deletion, of other content): the sync replaces or recreates it, as the
// kubelet does when the API source reports a mirror pod's change.
func (n *Node) mirrorSyncs(now time.Time) []lifecycle.UpdatePodOptions {
	if n.kube == nil {
		return nil
	}
	k := n.kube
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.mirrorSeen == nil {
		k.mirrorSeen = map[types.UID]string{}
	}
	var out []lifecycle.UpdatePodOptions
	present := map[types.UID]bool{}
	for _, pod := range n.desired.nextPods() {
		if !lifecycle.IsStaticPod(pod) {
			continue
		}
		present[pod.UID] = true
		sig := ""
		if m, ok := k.source.Mirror(pod.Namespace, pod.Name); ok {
			sig = fmt.Sprintf("%s/%t/%s", m.UID, m.DeletionTimestamp != nil, m.Annotations[lifecycle.ConfigMirrorAnnotation])
		}
		last, seen := k.mirrorSeen[pod.UID]
		k.mirrorSeen[pod.UID] = sig
		if seen && last != sig && !n.admission.isRejected(pod.UID) {
			out = append(out, lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateSync, Pod: pod, StartTime: now})
		}
	}
	for uid := range k.mirrorSeen {
		if !present[uid] {
			delete(k.mirrorSeen, uid)
		}
	}
	return out
}

// nextPods returns the newest desired pods apply was given.
func (d *desiredSet) nextPods() []*v1.Pod {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return append([]*v1.Pod(nil), d.next...)
}
