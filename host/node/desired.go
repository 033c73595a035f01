package node

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/sources"
)

// desiredSet is the merged desired pod set. The sync loop reads it as its
// lifecycle.ConfigSource; apply turns each change of it into pod worker
// updates.
//
// The set it shows (pods, byUID, origins, rejected, errs, synced) changes
// only when the sync loop takes a change and calls its commit, in the step
// that hands the updates to the workers. apply diffs against the newest
// set it was given (next, nextByUID), which may not be shown yet.
type desiredSet struct {
	// changed is notified each time a commit shows a new set.
	changed broadcast

	mu       sync.RWMutex
	pods     []*v1.Pod
	byUID    map[types.UID]*v1.Pod
	origins  map[types.UID]sources.Origin
	rejected []sources.Rejected
	errs     []error
	synced   bool

	next        []*v1.Pod
	nextByUID   map[types.UID]*v1.Pod
	nextOrigins map[types.UID]sources.Origin
	// applied counts the changes apply made, shown the last one committed.
	applied, shown uint64
	// mirrors, when set, holds the mirror pods (Kubernetes mode).
	mirrors mirrorIndex
}

func newDesiredSet() *desiredSet {
	return &desiredSet{byUID: map[types.UID]*v1.Pod{}, origins: map[types.UID]sources.Origin{},
		nextByUID: map[types.UID]*v1.Pod{}}
}

// mirrorIndex is where the mirror pods of static pods are: the API
// server's pods in Kubernetes mode.
type mirrorIndex interface {
	Mirror(namespace, name string) (*v1.Pod, bool)
	Mirrors() []*v1.Pod
}

// Pods returns the desired pods and, in Kubernetes mode, the mirror pods
// the API server holds for this node.
func (d *desiredSet) Pods() (pods, mirrors []*v1.Pod) {
	d.mu.RLock()
	pods = append([]*v1.Pod(nil), d.pods...)
	d.mu.RUnlock()
	if d.mirrors != nil {
		mirrors = d.mirrors.Mirrors()
	}
	return pods, mirrors
}

// SourcesReady reports whether every source has reported once.
func (d *desiredSet) SourcesReady() bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.synced
}

// Origin tells which source holds the pod with the UID.
func (d *desiredSet) Origin(uid types.UID) (sources.Origin, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	o, ok := d.origins[uid]
	return o, ok
}

// nextOrigin tells which source holds the pod with the UID in the newest
// set apply was given, shown or not.
func (d *desiredSet) nextOrigin(uid types.UID) (sources.Origin, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	o, ok := d.nextOrigins[uid]
	return o, ok
}

// Rejected returns the pods that must not run, with the reason.
func (d *desiredSet) Rejected() ([]sources.Rejected, []error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.rejected, d.errs
}

// apply returns, in order, the pod worker updates that take the node from
// the previous set to next: a create for each new UID, an update for each
// changed pod (a deletion timestamp is a change: the worker then
// terminates the pod with its deletion grace period), and a kill for each
// UID that left the set. It also returns the commit that shows next to
// readers; commits of older changes that come later are ignored.
func (d *desiredSet) apply(next sources.Desired, now time.Time) (updates []lifecycle.UpdatePodOptions, commit func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	byUID := make(map[types.UID]*v1.Pod, len(next.Pods))
	origins := make(map[types.UID]sources.Origin, len(next.Pods))
	pods := make([]*v1.Pod, 0, len(next.Pods))
	for _, p := range next.Pods {
		pod := p.Pod
		byUID[pod.UID] = pod
		origins[pod.UID] = p.Origin
		pods = append(pods, pod)
		old, known := d.nextByUID[pod.UID]
		switch {
		case !known:
			updates = append(updates, lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: pod, StartTime: now})
		case podChanged(old, pod):
			updates = append(updates, lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateUpdate, Pod: pod, StartTime: now})
		}
	}
	for _, old := range d.next {
		if _, still := byUID[old.UID]; !still {
			updates = append(updates, lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateKill, Pod: gone(old, now), StartTime: now})
		}
	}
	d.next, d.nextByUID, d.nextOrigins = pods, byUID, origins
	d.applied++
	gen := d.applied
	commit = func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if gen <= d.shown {
			return
		}
		d.shown = gen
		d.pods, d.byUID, d.origins = pods, byUID, origins
		d.rejected, d.errs, d.synced = next.Rejected, next.Errors, next.Synced
		d.changed.notify()
	}
	return updates, commit
}

// podChanged reports whether the worker must hear about new: its spec,
// labels, annotations or deletion request differ from old's, or a
// condition one of its readiness gates names (set in the API by someone
// else, as a load balancer controller does), on which its Ready depends:
// the kubelet syncs such a pod again likewise (its readiness reconcile).
// Other status changes are the node's own writes coming back.
func podChanged(old, new *v1.Pod) bool {
	return !equality.Semantic.DeepEqual(old.Spec, new.Spec) ||
		!equality.Semantic.DeepEqual(old.Labels, new.Labels) ||
		!equality.Semantic.DeepEqual(old.Annotations, new.Annotations) ||
		!equality.Semantic.DeepEqual(old.DeletionTimestamp, new.DeletionTimestamp) ||
		!equality.Semantic.DeepEqual(old.DeletionGracePeriodSeconds, new.DeletionGracePeriodSeconds) ||
		readinessGatesChanged(old, new)
}

// readinessGatesChanged reports whether a condition named by new's
// readiness gates differs in status between old and new.
func readinessGatesChanged(old, new *v1.Pod) bool {
	status := func(p *v1.Pod, t v1.PodConditionType) v1.ConditionStatus {
		for _, c := range p.Status.Conditions {
			if c.Type == t {
				return c.Status
			}
		}
		return ""
	}
	for _, g := range new.Spec.ReadinessGates {
		if status(old, g.ConditionType) != status(new, g.ConditionType) {
			return true
		}
	}
	return false
}

// gone marks a pod that left the desired set as deleted, as the API server
// would have: its worker then knows that nothing of it is to be kept once
// it is terminated (containers, logs, status record).
func gone(pod *v1.Pod, now time.Time) *v1.Pod {
	if pod.DeletionTimestamp != nil {
		return pod
	}
	pod = pod.DeepCopy()
	ts := metav1.NewTime(now)
	pod.DeletionTimestamp = &ts
	return pod
}
