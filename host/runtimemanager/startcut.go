package runtimemanager

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
)

// cutStarts remembers the containers whose StartContainer failed in an
// uncertain way: the runtime plugin died under the call (or it timed
// out). containerd then cancels the start and leaves the container exited
// 128 (StartError) without a start time. That is no crash of the
// container, and a restart policy must not count it: a container of the
// set that is exited and never started is shown as created and is created
// again at the same attempt, without back-off. The set lives as long as
// the host process; it is keyed by container ID. Safe for concurrent use.
type cutStarts struct {
	mu  sync.Mutex
	ids map[string]types.UID
}

func (s *cutStarts) add(uid types.UID, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids = map[string]types.UID{}
	}
	s.ids[id] = uid
}

func (s *cutStarts) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.ids[id]
	return ok
}

func (s *cutStarts) drop(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ids, id)
}

// forget drops every container of a pod.
func (s *cutStarts) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, u := range s.ids {
		if u == uid {
			delete(s.ids, id)
		}
	}
}

// mark sets startCut on the containers of st whose start was cut short
// and that never started; it forgets those that did start. Without
// details (a listing) an exited container of the set counts as never
// started until its status says otherwise.
func (s *cutStarts) mark(st *podState) {
	for i := range st.containers {
		c := &st.containers[i]
		if !s.has(c.id) {
			continue
		}
		switch {
		case c.state == lifecycle.ContainerExited && c.startedAt.IsZero():
			c.startCut = true
		case c.state != lifecycle.ContainerCreated:
			s.drop(c.id) // it did start: its exit is its own
		}
	}
}
