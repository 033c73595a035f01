package main

import (
	"maps"
	"sync"
	"time"
)

// EventType is the kind of a state change.
type EventType int

// The event types.
const (
	EventContainerCreated EventType = iota + 1
	EventContainerStarted
	EventContainerExited
	EventContainerRemoved
	EventSandboxReady
	EventSandboxNotReady
	EventSandboxRemoved
)

// Event is one state change of a sandbox or container.
type Event struct {
	Type        EventType
	Time        time.Time
	SandboxID   string
	ContainerID string // empty for sandbox events
	Labels      map[string]string
}

// subscriberBuffer is how many events a slow subscriber may lag behind
// before it misses some; the stream is a hint, so dropping is allowed.
const subscriberBuffer = 256

// hub fans events out to subscribers without ever blocking the publisher.
type hub struct {
	mu   sync.Mutex
	subs map[chan Event]struct{}
}

// Subscribe returns a channel of the events published from now on, and a
// function that ends the subscription.
func (h *hub) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, subscriberBuffer)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[chan Event]struct{}{}
	}
	h.subs[ch] = struct{}{}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, ch)
	}
}

// publish hands ev to every subscriber with room for it.
func (h *hub) publish(ev Event) {
	ev.Labels = maps.Clone(ev.Labels)
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- ev:
		default: // a slow subscriber misses the event
		}
	}
}
