package supervisor

import (
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// EventType says what happened to a plugin.
type EventType string

// The event types.
const (
	// EventStarted: the first launch passed its checks.
	EventStarted EventType = "started"
	// EventRestarted: a relaunch passed its checks; the plugin lost its
	// in-memory state, so the lifecycle should resync with it.
	EventRestarted EventType = "restarted"
	// EventExited: the running plugin's process exited.
	EventExited EventType = "exited"
	// EventStartFailed: a launch failed before the checks (the process
	// exited, or the handshake timed out).
	EventStartFailed EventType = "start-failed"
	// EventRefused: a launch failed a start check.
	EventRefused EventType = "refused"
	// EventBackoff: the supervisor waits Delay before the next launch.
	EventBackoff EventType = "backoff"
	// EventReady: the plugin became ready (at start or after a probe).
	EventReady EventType = "ready"
	// EventNotReady: the plugin became not ready (at start or after a
	// probe); it still runs and serves calls.
	EventNotReady EventType = "not-ready"
	// EventStopped: the Manager stopped the plugin.
	EventStopped EventType = "stopped"
)

// Event is one thing that happened to one plugin.
type Event struct {
	Plugin string
	Type   EventType
	// State and Restarts after the event.
	State    State
	Restarts int
	// Err is the error behind an Exited, StartFailed, Refused or NotReady
	// event.
	Err string
	// Delay is the back-off of an EventBackoff.
	Delay time.Duration
	Time  time.Time
}

// subscriberBuffer is how many events a subscriber may fall behind before
// events to it are dropped.
const subscriberBuffer = 256

// hub fans events out to subscribers without ever blocking a supervisor.
type hub struct {
	log    hclog.Logger
	mu     sync.Mutex
	subs   map[chan Event]struct{}
	closed bool
}

func newHub(log hclog.Logger) *hub {
	return &hub{log: log, subs: make(map[chan Event]struct{})}
}

func (h *hub) subscribe() (<-chan Event, func()) {
	ch := make(chan Event, subscriberBuffer)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(ch)
		return ch, func() {}
	}
	h.subs[ch] = struct{}{}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[ch]; ok {
			delete(h.subs, ch)
			close(ch)
		}
	}
}

func (h *hub) publish(ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- ev:
		default:
			h.log.Warn("event subscriber is behind, dropping event", "plugin", ev.Plugin, "event", string(ev.Type))
		}
	}
}

// close ends every subscription.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for ch := range h.subs {
		delete(h.subs, ch)
		close(ch)
	}
}
