package node

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/sources"
)

// desiredSet is the merged desired pod set. The sync loop reads it as its
// lifecycle.ConfigSource; apply turns each change of it into pod worker
// updates.
type desiredSet struct {
	mu       sync.RWMutex
	pods     []*v1.Pod
	byUID    map[types.UID]*v1.Pod
	rejected []sources.Rejected
	errs     []error
	synced   bool
}

func newDesiredSet() *desiredSet {
	return &desiredSet{byUID: map[types.UID]*v1.Pod{}}
}

// Pods returns the desired pods; podhost has no mirror pods of its own.
func (d *desiredSet) Pods() (pods, mirrors []*v1.Pod) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return append([]*v1.Pod(nil), d.pods...), nil
}

// SourcesReady reports whether every source has reported once.
func (d *desiredSet) SourcesReady() bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.synced
}

// Rejected returns the pods that must not run, with the reason.
func (d *desiredSet) Rejected() ([]sources.Rejected, []error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.rejected, d.errs
}

// apply replaces the set with next and returns, in order, the pod worker
// updates that take the node from the old set to the new one: a create for
// each new UID, an update for each changed pod (a deletion timestamp is a
// change: the worker then terminates the pod with its deletion grace
// period), and a kill for each UID that left the set.
func (d *desiredSet) apply(next sources.Desired, now time.Time) []lifecycle.UpdatePodOptions {
	d.mu.Lock()
	defer d.mu.Unlock()
	var updates []lifecycle.UpdatePodOptions
	byUID := make(map[types.UID]*v1.Pod, len(next.Pods))
	pods := make([]*v1.Pod, 0, len(next.Pods))
	for _, p := range next.Pods {
		pod := p.Pod
		byUID[pod.UID] = pod
		pods = append(pods, pod)
		old, known := d.byUID[pod.UID]
		switch {
		case !known:
			updates = append(updates, lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: pod, StartTime: now})
		case podChanged(old, pod):
			updates = append(updates, lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateUpdate, Pod: pod, StartTime: now})
		}
	}
	for _, old := range d.pods {
		if _, still := byUID[old.UID]; !still {
			updates = append(updates, lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateKill, Pod: old, StartTime: now})
		}
	}
	d.pods, d.byUID = pods, byUID
	d.rejected, d.errs, d.synced = next.Rejected, next.Errors, next.Synced
	return updates
}

// podChanged reports whether the worker must hear about new: its spec,
// labels, annotations or deletion request differ from old's.
func podChanged(old, new *v1.Pod) bool {
	return !equality.Semantic.DeepEqual(old.Spec, new.Spec) ||
		!equality.Semantic.DeepEqual(old.Labels, new.Labels) ||
		!equality.Semantic.DeepEqual(old.Annotations, new.Annotations) ||
		!equality.Semantic.DeepEqual(old.DeletionTimestamp, new.DeletionTimestamp) ||
		!equality.Semantic.DeepEqual(old.DeletionGracePeriodSeconds, new.DeletionGracePeriodSeconds)
}
