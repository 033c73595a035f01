package runtimemanager

import (
	"errors"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/supervisor"
	"github.com/podhost/podhost/lifecycle"
)

// cutByPluginDeath reports whether a plugin call failed because the plugin
// died under it: the supervisor says so (ErrPluginExited), or the
// transport broke (UNAVAILABLE) before the exit was confirmed. err is the
// call's raw error. A timeout is not included: a start that keeps timing
// out is the container's failure and goes through back-off.
func cutByPluginDeath(err error) bool {
	return errors.Is(err, supervisor.ErrPluginExited) || status.Code(err) == codes.Unavailable
}

// cutStarts remembers the containers whose StartContainer the runtime
// plugin's death cut short. containerd then cancels the start and leaves
// the container exited 128 (StartError) without a start time. That is no
// crash of the container, and a restart policy must not count it: a
// container of the set that is exited and never started is shown as
// created and is created again at the same attempt, without back-off. The
// set lives as long as the host process; it is keyed by container ID.
// Safe for concurrent use.
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
