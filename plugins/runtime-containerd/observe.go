package main

// objectKind is what an ID names in CRI.
type objectKind int

const (
	objectNone objectKind = iota // CRI does not know the ID
	objectSandbox
	objectContainer
)

// object is what CRI says of one ID now: the watcher's answer to a
// containerd event, which only says "look at this ID again".
type object struct {
	kind      objectKind
	sandbox   sandboxEntry
	container containerEntry
}

// settled reports whether s already shows what ev tells of: then the event
// is a repeat (of the plugin's own change, or of what a resync found) and
// needs no look-up.
func (s snapshot) settled(ev taskEvent) bool {
	if c, ok := s.containers[ev.id]; ok {
		switch ev.topic {
		case topicCreated:
			return true
		case topicStarted:
			return c.state == ContainerRunning || c.state == ContainerExited
		case topicExited:
			return c.state == ContainerExited
		}
		return false
	}
	if sb, ok := s.sandboxes[ev.id]; ok {
		switch ev.topic {
		case topicCreated, topicStarted:
			return true // a sandbox is ready from its start
		case topicExited:
			return sb.state == SandboxNotReady
		}
		return false
	}
	return ev.topic == topicRemoved // nothing to remove
}

// observe records what CRI says of ev's object and returns the events that
// leads to, and whether the watcher is done with ev: false while CRI has
// not caught up with containerd yet. States only move forward (a CRI ID is
// never reused), so a look-up older than a change the plugin noted
// meanwhile changes nothing. An ID that CRI does not know is dropped unless
// the event is its creation (CRI adds it to its view once it has made it)
// or its removal: it is not CRI's, or CRI has not finished making it and
// the plugin notes it when its call returns.
func (s snapshot) observe(ev taskEvent, obj object, now int64) ([]Event, bool) {
	switch obj.kind {
	case objectContainer:
		if _, isSandbox := s.sandboxes[ev.id]; isSandbox {
			return nil, true
		}
		var events []Event
		old, known := s.containers[ev.id]
		switch {
		case !known:
			s.containers[ev.id] = obj.container
			events = containerTransitionEvents(0, ev.id, obj.container, now)
		case containerRank(obj.container.state) > containerRank(old.state):
			next := old
			next.state = obj.container.state
			s.containers[ev.id] = next
			events = containerTransitionEvents(old.state, ev.id, next, now)
		}
		return events, s.settled(ev)
	case objectSandbox:
		if _, isContainer := s.containers[ev.id]; isContainer {
			return nil, true
		}
		old, known := s.sandboxes[ev.id]
		switch {
		case !known:
			s.sandboxes[ev.id] = obj.sandbox
			return []Event{sandboxEvent(sandboxEventType(obj.sandbox.state), ev.id, obj.sandbox.labels, now)}, s.settled(ev)
		case old.state == SandboxReady && obj.sandbox.state == SandboxNotReady:
			old.state = SandboxNotReady
			s.sandboxes[ev.id] = old
			return []Event{sandboxEvent(EventSandboxNotReady, ev.id, old.labels, now)}, s.settled(ev)
		}
		return nil, s.settled(ev)
	}
	switch ev.topic {
	case topicCreated:
		return nil, false
	case topicStarted, topicExited:
		return nil, true
	}
	if _, ok := s.sandboxes[ev.id]; ok {
		return s.apply(change{kind: sandboxRemoved, sandboxID: ev.id}, now), true
	}
	return s.apply(change{kind: containerRemoved, containerID: ev.id}, now), true
}

// containerTransitionEvents are the events of c going from state from to
// its own state.
func containerTransitionEvents(from ContainerState, id string, c containerEntry, now int64) []Event {
	var out []Event
	for _, typ := range containerTransition(from, c.state) {
		out = append(out, containerEvent(typ, id, c, now))
	}
	return out
}

// containerRank orders the states a container goes through; UNKNOWN is
// below all, so that it never overwrites a state seen.
func containerRank(s ContainerState) int {
	switch s {
	case ContainerCreated:
		return 1
	case ContainerRunning:
		return 2
	case ContainerExited:
		return 3
	}
	return 0
}

func sandboxEventType(s SandboxState) EventType {
	if s == SandboxReady {
		return EventSandboxReady
	}
	return EventSandboxNotReady
}
