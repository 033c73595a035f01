package apisource

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
)

// Persister keeps the api source's pods across host restarts. Save replaces
// the whole stored set; Load returns what the last successful Save stored
// (nothing on a fresh node). Both must be safe to call from one goroutine
// at a time; the source never calls them concurrently.
type Persister interface {
	Save(ctx context.Context, pods []*v1.Pod) error
	Load(ctx context.Context) ([]*v1.Pod, error)
}

// MemoryPersister is a Persister in memory, for tests and for hosts that
// run without local state. The zero value is ready to use.
type MemoryPersister struct {
	mu      sync.Mutex
	pods    []*v1.Pod
	saveErr error
	saves   int
}

// Save stores deep copies of pods.
func (m *MemoryPersister) Save(_ context.Context, pods []*v1.Pod) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saveErr != nil {
		return m.saveErr
	}
	m.pods = deepCopies(pods)
	m.saves++
	return nil
}

// Load returns deep copies of the stored pods.
func (m *MemoryPersister) Load(_ context.Context) ([]*v1.Pod, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return deepCopies(m.pods), nil
}

// Saves counts the successful Save calls.
func (m *MemoryPersister) Saves() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saves
}

// SetSaveErr makes every later Save fail with err (nil to succeed again).
func (m *MemoryPersister) SetSaveErr(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.saveErr = err
}

func deepCopies(pods []*v1.Pod) []*v1.Pod {
	if pods == nil {
		return nil
	}
	out := make([]*v1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}
