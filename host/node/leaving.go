package node

import (
	"cmp"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/sources/manifest"
)

// leavingPods are the pods that left the desired set (a removed manifest,
// a forced delete) and whose worker has not finished them yet. The API
// keeps serving them, with their deletionTimestamp, until their containers
// are stopped, as the API server keeps a deleted pod until the kubelet
// reports it finished. A pod is forgotten when its worker finishes it
// (forget, from workerReleased); one whose worker ended without a sync (a
// static pod killed while it waited for its name) at the next change of
// the desired set (record) or the next listing (list).
type leavingPods struct {
	mu   sync.Mutex
	pods map[types.UID]*v1.Pod
}

// record forgets the finished pods and notes the pods that updates kill
// because they left the desired set.
func (l *leavingPods) record(updates []lifecycle.UpdatePodOptions, finished func(types.UID) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for uid := range l.pods {
		if finished(uid) {
			delete(l.pods, uid)
		}
	}
	for _, u := range updates {
		if u.UpdateType != lifecycle.UpdateKill || u.Pod == nil {
			continue
		}
		if l.pods == nil {
			l.pods = map[types.UID]*v1.Pod{}
		}
		l.pods[u.Pod.UID] = u.Pod
	}
}

// forget drops the pod: its worker finished it.
func (l *leavingPods) forget(uid types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pods, uid)
}

// list returns the leaving pods that are not desired (again) and not
// finished yet, in namespace/name order, and forgets the finished ones.
func (l *leavingPods) list(desired map[types.UID]bool, finished func(types.UID) bool) []*v1.Pod {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*v1.Pod
	for uid, pod := range l.pods {
		switch {
		case finished(uid):
			delete(l.pods, uid)
		case !desired[uid]:
			out = append(out, pod)
		}
	}
	slices.SortFunc(out, func(a, b *v1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID))
	})
	return out
}

// workerReleased is told that a worker finished its pod
// (lifecycle.Workers.Released): the PLEG judges the runtime events it held
// for the pod on their own, the pod is no longer a leaving one, and the
// local API's pod watches wake, since a finished pod leaves their list.
func (n *Node) workerReleased(r lifecycle.PodRef) {
	n.pleg.Release(r)
	n.leaving.forget(r.UID)
	n.finishedPods.notify()
}

// podSource is the config source a pod came from, by its annotation.
func podSource(pod *v1.Pod) string { return pod.Annotations[manifest.AnnotationSource] }
