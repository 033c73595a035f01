package main

import (
	"cmp"
	"slices"
)

// The watcher's snapshot answers ListSandboxes and ListContainers while it
// is known current: a watch run exists (a host follows Events), its
// subscription to containerd's events is live, its listing is in, and
// nothing made it stale since (a change it could not record, a failed call
// of the plugin that may have changed something, an object CRI calls not
// found, a new backend). Otherwise the listings go to CRI.
//
// The plugin's own calls are in the snapshot before they return, each
// creation with its item as CRI gives it (sandboxItem, containerItem). The
// one known lag: a change made by anyone else is in it once CRI shows it,
// the moment its event is published, so a listing prompted by the event
// sees it, and one made between CRI's change and the watcher's look-up
// does not yet. A change whose containerd event went missing is found by
// the next periodic resync (resyncPeriod). Listings are sorted by creation
// time and ID; CRI's order is containerd's map order.

// sandboxes lists the snapshot's sandboxes that f selects, as CRI's listing
// converted by sandboxFromCRI would; false when the snapshot is not current.
func (w *watcher) sandboxes(f SandboxFilter) ([]Sandbox, bool) {
	return fromSnapshot(w, func(s snapshot) []Sandbox { return s.sandboxList(f) })
}

// containers lists the snapshot's containers that f selects, as CRI's
// listing converted by containerFromCRI would; false when the snapshot is
// not current.
func (w *watcher) containers(f ContainerFilter) ([]Container, bool) {
	return fromSnapshot(w, func(s snapshot) []Container { return s.containerList(f) })
}

// fromSnapshot is list of w's snapshot, or false when it is not current.
func fromSnapshot[T any](w *watcher, list func(snapshot) []T) ([]T, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.run.current() {
		return nil, false
	}
	return list(w.run.last), true
}

// current reports whether run's snapshot may be served; the caller holds
// watcher.mu.
func (run *watchRun) current() bool {
	return run != nil && run.live && !run.stale && run.last.sandboxes != nil
}

// sandboxList applies f as ListSandboxes does (ID exact, state, every label
// of the selector), oldest first.
func (s snapshot) sandboxList(f SandboxFilter) []Sandbox {
	var out []Sandbox
	for id, e := range s.sandboxes {
		if f.ID != "" && id != f.ID || filtersSandboxState(f.State) && e.state != f.State || !selects(f.Labels, e.labels) {
			continue
		}
		sb := sandboxFromCRI(e.item)
		sb.ID, sb.State = id, e.state
		out = append(out, sb)
	}
	slices.SortFunc(out, func(a, b Sandbox) int { return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID)) })
	return out
}

// containerList applies f as ListContainers does (ID and sandbox ID exact,
// state, every label of the selector), oldest first.
func (s snapshot) containerList(f ContainerFilter) []Container {
	var out []Container
	for id, e := range s.containers {
		if f.ID != "" && id != f.ID || f.SandboxID != "" && e.sandboxID != f.SandboxID ||
			filtersState(f.State) && e.state != f.State || !selects(f.Labels, e.labels) {
			continue
		}
		c := containerFromCRI(e.item)
		c.ID, c.SandboxID, c.State = id, e.sandboxID, e.state
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Container) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// filtersSandboxState and filtersState report whether a filter's state
// selects, as sandboxFilterToCRI and containerFilterToCRI pass it on (0,
// any, does not).
func filtersSandboxState(s SandboxState) bool {
	_, ok := sandboxStatesToCRI[s]
	return ok
}

func filtersState(s ContainerState) bool {
	_, ok := containerStatesToCRI[s]
	return ok
}

// selects reports whether labels has every label of the selector, as CRI's
// label selector matches.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
