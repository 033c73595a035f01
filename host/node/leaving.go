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
// reports it finished.
type leavingPods struct {
	mu   sync.Mutex
	pods map[types.UID]*v1.Pod
}

// record notes the pods that updates kill because they left the desired
// set.
func (l *leavingPods) record(updates []lifecycle.UpdatePodOptions) {
	l.mu.Lock()
	defer l.mu.Unlock()
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

// podSource is the config source a pod came from, by its annotation.
func podSource(pod *v1.Pod) string { return pod.Annotations[manifest.AnnotationSource] }
