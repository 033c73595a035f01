package lifecycletest

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// FakeRecorder keeps every event as "Type Reason pod: message".
type FakeRecorder struct {
	mu     sync.Mutex
	events []string
}

// Event records one event.
func (r *FakeRecorder) Event(pod *v1.Pod, eventType, reason, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := ""
	if pod != nil {
		name = pod.Name
	}
	r.events = append(r.events, fmt.Sprintf("%s %s %s: %s", eventType, reason, name, message))
}

// Events returns the recorded events.
func (r *FakeRecorder) Events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

var _ lifecycle.Recorder = (*FakeRecorder)(nil)
