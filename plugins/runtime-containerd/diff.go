package main

import (
	"slices"

	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// snapshot is what the watcher last knew of containerd: each sandbox's and
// container's state and labels (as containerd holds them, the plugin's own
// included) and the item CRI listed it as, from which ListSandboxes and
// ListContainers are served (serve.go). Labels and items are shared with
// the listing they came from and never modified: a change of state is
// recorded in state, which overrides the item's.
type snapshot struct {
	sandboxes  map[string]sandboxEntry
	containers map[string]containerEntry
}

type sandboxEntry struct {
	state  SandboxState
	labels map[string]string
	item   *criapi.PodSandbox
}

type containerEntry struct {
	sandboxID string
	state     ContainerState
	labels    map[string]string
	item      *criapi.Container
}

// snapshotOf makes a snapshot of a listing.
func snapshotOf(sandboxes []*criapi.PodSandbox, containers []*criapi.Container) snapshot {
	s := snapshot{
		sandboxes:  make(map[string]sandboxEntry, len(sandboxes)),
		containers: make(map[string]containerEntry, len(containers)),
	}
	for _, sb := range sandboxes {
		s.sandboxes[sb.GetId()] = sandboxEntryOf(sb)
	}
	for _, c := range containers {
		s.containers[c.GetId()] = containerEntryOf(c)
	}
	return s
}

func sandboxEntryOf(sb *criapi.PodSandbox) sandboxEntry {
	return sandboxEntry{state: sandboxStateFromCRI(sb.GetState()), labels: sb.GetLabels(), item: sb}
}

func containerEntryOf(c *criapi.Container) containerEntry {
	return containerEntry{sandboxID: c.GetPodSandboxId(), state: containerStateFromCRI(c.GetState()), labels: c.GetLabels(), item: c}
}

// diff returns the events that lead from prev to cur, stamped now, in an
// order a reader can follow: sandboxes that appeared, then container
// events (by container ID), then sandboxes that stopped, then sandboxes
// that went away. A container seen for the first time already running gets
// CREATED and STARTED; one seen first when exited gets CREATED and EXITED
// (whether it ever started is not in a listing). Changes to or from the
// UNKNOWN state make no event. A container that goes away while it was
// running exited first (goneEvents).
func diff(prev, cur snapshot, now int64) []Event {
	var ready, ctrs, notReady, removed []Event
	for _, id := range sortedKeys(cur.sandboxes) {
		sb := cur.sandboxes[id]
		old, seen := prev.sandboxes[id]
		if seen && old.state == sb.state {
			continue
		}
		switch sb.state {
		case SandboxReady:
			ready = append(ready, sandboxEvent(EventSandboxReady, id, sb.labels, now))
		case SandboxNotReady:
			notReady = append(notReady, sandboxEvent(EventSandboxNotReady, id, sb.labels, now))
		}
	}
	for _, id := range sortedKeys(prev.sandboxes) {
		if _, ok := cur.sandboxes[id]; !ok {
			removed = append(removed, sandboxEvent(EventSandboxRemoved, id, prev.sandboxes[id].labels, now))
		}
	}
	for _, id := range sortedKeys(cur.containers) {
		c := cur.containers[id]
		var from ContainerState // 0: not seen before
		if old, ok := prev.containers[id]; ok {
			from = old.state
		}
		ctrs = append(ctrs, containerTransitionEvents(from, id, c, now)...)
	}
	for _, id := range sortedKeys(prev.containers) {
		if _, ok := cur.containers[id]; !ok {
			ctrs = append(ctrs, goneEvents(id, prev.containers[id], now)...)
		}
	}
	// Removals after the other container events keep ID order within each.
	return slices.Concat(ready, ctrs, notReady, removed)
}

// containerTransition lists the events of a container going from one state
// to another; from 0 is a container not seen before.
func containerTransition(from, to ContainerState) []EventType {
	if from == to || to == ContainerUnknown || from == ContainerUnknown {
		return nil
	}
	var out []EventType
	if from == 0 {
		out = append(out, EventContainerCreated)
	}
	switch {
	case to == ContainerRunning && from != ContainerExited:
		out = append(out, EventContainerStarted)
	case to == ContainerExited:
		out = append(out, EventContainerExited)
	}
	return out
}

// changeKind is a change the plugin made itself.
type changeKind int

const (
	sandboxReadied changeKind = iota + 1
	sandboxStopped
	sandboxRemoved
	containerCreated
	containerStarted
	containerExited
	containerRemoved
)

// change is one call of the plugin that succeeded. The calls that create
// something carry the item CRI lists it as (nil when it was not looked up:
// nobody watches, or the look-up failed); the others find their object in
// the snapshot.
type change struct {
	kind                   changeKind
	sandboxID, containerID string
	sandbox                *criapi.PodSandbox
	container              *criapi.Container
}

// lacks reports whether s cannot record c: c changes an object s does not
// know, without the item that would let s add it. s then misses what CRI
// shows, and must be listed again before it is served.
func (s snapshot) lacks(c change) bool {
	switch c.kind {
	case sandboxReadied:
		_, ok := s.sandboxes[c.sandboxID]
		return !ok && c.sandbox == nil
	case sandboxStopped:
		_, ok := s.sandboxes[c.sandboxID]
		return !ok
	case containerCreated:
		_, ok := s.containers[c.containerID]
		return !ok && c.container == nil
	case containerStarted, containerExited:
		_, ok := s.containers[c.containerID]
		return !ok
	}
	return false // removing what s does not know changes nothing
}

// apply records a change the plugin made in s and returns its events: none
// when s already shows it, or when s does not know the object (see lacks).
func (s snapshot) apply(c change, now int64) []Event {
	switch c.kind {
	case sandboxReadied:
		old, ok := s.sandboxes[c.sandboxID]
		switch {
		case ok && old.state == SandboxReady:
			return nil
		case ok:
			old.state = SandboxReady
			s.sandboxes[c.sandboxID] = old
		case c.sandbox == nil:
			return nil
		default:
			old = sandboxEntryOf(c.sandbox)
			old.state = SandboxReady
			s.sandboxes[c.sandboxID] = old
		}
		return []Event{sandboxEvent(EventSandboxReady, c.sandboxID, old.labels, now)}
	case sandboxStopped:
		sb, ok := s.sandboxes[c.sandboxID]
		if !ok || sb.state == SandboxNotReady {
			return nil
		}
		// CRI's stop kills the sandbox's running containers first and
		// returns once they have exited; created ones stay created.
		var out []Event
		for _, id := range sortedKeys(s.containers) {
			if ctr := s.containers[id]; ctr.sandboxID == c.sandboxID && ctr.state == ContainerRunning {
				out = append(out, s.apply(change{kind: containerExited, containerID: id}, now)...)
			}
		}
		sb.state = SandboxNotReady
		s.sandboxes[c.sandboxID] = sb
		return append(out, sandboxEvent(EventSandboxNotReady, c.sandboxID, sb.labels, now))
	case sandboxRemoved:
		var out []Event
		for _, id := range sortedKeys(s.containers) {
			if ctr := s.containers[id]; ctr.sandboxID == c.sandboxID {
				delete(s.containers, id)
				out = append(out, goneEvents(id, ctr, now)...)
			}
		}
		if sb, ok := s.sandboxes[c.sandboxID]; ok {
			delete(s.sandboxes, c.sandboxID)
			out = append(out, sandboxEvent(EventSandboxRemoved, c.sandboxID, sb.labels, now))
		}
		return out
	case containerCreated:
		if _, ok := s.containers[c.containerID]; ok || c.container == nil {
			return nil
		}
		ctr := containerEntryOf(c.container)
		ctr.state = ContainerCreated
		s.containers[c.containerID] = ctr
		return []Event{containerEvent(EventContainerCreated, c.containerID, ctr, now)}
	case containerStarted, containerExited:
		to, typ := ContainerRunning, EventContainerStarted
		if c.kind == containerExited {
			to, typ = ContainerExited, EventContainerExited
		}
		ctr, ok := s.containers[c.containerID]
		if !ok || ctr.state == to || ctr.state == ContainerExited {
			return nil
		}
		ctr.state = to
		s.containers[c.containerID] = ctr
		return []Event{containerEvent(typ, c.containerID, ctr, now)}
	case containerRemoved:
		ctr, ok := s.containers[c.containerID]
		if !ok {
			return nil
		}
		delete(s.containers, c.containerID)
		return goneEvents(c.containerID, ctr, now)
	}
	return nil
}

// keep overwrites s with what from knows of the objects in ids, or drops
// them when from does not know them: a listing that may have started before
// the plugin's own change must not undo it.
func (s snapshot) keep(from snapshot, ids map[string]bool) {
	for id := range ids {
		if sb, ok := from.sandboxes[id]; ok {
			s.sandboxes[id] = sb
		} else {
			delete(s.sandboxes, id)
		}
		if c, ok := from.containers[id]; ok {
			s.containers[id] = c
		} else {
			delete(s.containers, id)
		}
	}
}

// goneEvents are the events of container c going away: a running one
// exited first, and that exit must not be lost.
func goneEvents(id string, c containerEntry, now int64) []Event {
	if c.state == ContainerRunning {
		return []Event{containerEvent(EventContainerExited, id, c, now), containerEvent(EventContainerRemoved, id, c, now)}
	}
	return []Event{containerEvent(EventContainerRemoved, id, c, now)}
}

func sandboxEvent(typ EventType, id string, labels map[string]string, now int64) Event {
	return Event{Type: typ, Time: now, SandboxID: id, Labels: hostLabels(labels)}
}

func containerEvent(typ EventType, id string, c containerEntry, now int64) Event {
	return Event{Type: typ, Time: now, SandboxID: c.sandboxID, ContainerID: id, Labels: hostLabels(c.labels)}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
