package runtimemanager

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
)

// containerDetails are the facts of a container that a listing leaves
// out and ContainerStatus gives (fillDetails).
type containerDetails struct {
	state                 lifecycle.ContainerState
	startedAt, finishedAt time.Time
	exitCode              int32
	reason, message       string
}

// knownDetails remembers the details of the containers that were running
// or exited when ContainerStatus last answered for them. Those facts do
// not change while the container stays in that state (a restart is a new
// container), so a pod inspected again asks only for the containers whose
// listed state moved on. Entries are kept per pod and cut to the
// containers of its latest listing; RemovePod forgets the pod. Safe for
// concurrent use.
type knownDetails struct {
	mu   sync.Mutex
	pods map[types.UID]map[string]containerDetails
}

// lookup returns the details of container id if they were read in the
// listed state.
func (k *knownDetails) lookup(uid types.UID, id string, listed lifecycle.ContainerState) (containerDetails, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	d, ok := k.pods[uid][id]
	return d, ok && d.state == listed
}

// keep records the details of the containers of s that are running with a
// start time or exited with a finish time, and forgets those of the pod's
// containers s no longer lists.
func (k *knownDetails) keep(s *podState) {
	kept := make(map[string]containerDetails, len(s.containers))
	for _, c := range s.containers {
		if (c.state == lifecycle.ContainerRunning && !c.startedAt.IsZero()) ||
			(c.state == lifecycle.ContainerExited && !c.finishedAt.IsZero()) {
			kept[c.id] = containerDetails{state: c.state, startedAt: c.startedAt, finishedAt: c.finishedAt,
				exitCode: c.exitCode, reason: c.reason, message: c.message}
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pods == nil {
		k.pods = map[types.UID]map[string]containerDetails{}
	}
	if len(kept) == 0 {
		delete(k.pods, s.uid)
		return
	}
	k.pods[s.uid] = kept
}

// forget drops every container of a pod.
func (k *knownDetails) forget(uid types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.pods, uid)
}
