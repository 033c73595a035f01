package apisource

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
)

// Change is one change to the stored pods: Pod stored under
// Namespace/Name, or that pod removed when Pod is nil.
type Change struct {
	Namespace, Name string
	Pod             *v1.Pod
}

// ObjectChange is one change to the stored ConfigMaps and Secrets: the
// one of ConfigMap and Secret set stored under Kind Namespace/Name, or
// that record removed when neither is.
type ObjectChange struct {
	Kind, Namespace, Name string
	ConfigMap             *v1.ConfigMap
	Secret                *v1.Secret
}

// Persister keeps the api source's pods, ConfigMaps and Secrets across
// host restarts. Write and WriteObject store one change and return once it
// is durable; Load and LoadObjects return what the successful writes
// stored (nothing on a fresh node). Writes are called concurrently, never
// twice at once for the same object, and an implementation may commit
// concurrent writes together.
type Persister interface {
	Write(ctx context.Context, c Change) error
	Load(ctx context.Context) ([]*v1.Pod, error)
	WriteObject(ctx context.Context, c ObjectChange) error
	LoadObjects(ctx context.Context) ([]ObjectChange, error)
}

// MemoryPersister is a Persister in memory, for tests and for hosts that
// run without local state. The zero value is ready to use.
type MemoryPersister struct {
	mu      sync.Mutex
	pods    map[string]*v1.Pod
	objects map[string]ObjectChange
	saveErr error
	saves   int
}

// Write stores a deep copy of the change.
func (m *MemoryPersister) Write(_ context.Context, c Change) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saveErr != nil {
		return m.saveErr
	}
	if m.pods == nil {
		m.pods = map[string]*v1.Pod{}
	}
	if c.Pod == nil {
		delete(m.pods, key(c.Namespace, c.Name))
	} else {
		m.pods[key(c.Namespace, c.Name)] = c.Pod.DeepCopy()
	}
	m.saves++
	return nil
}

// Load returns deep copies of the stored pods, sorted by namespace/name.
func (m *MemoryPersister) Load(_ context.Context) ([]*v1.Pod, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return deepCopies(sortedPods(m.pods)), nil
}

// WriteObject stores a deep copy of the change.
func (m *MemoryPersister) WriteObject(_ context.Context, c ObjectChange) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saveErr != nil {
		return m.saveErr
	}
	if m.objects == nil {
		m.objects = map[string]ObjectChange{}
	}
	k := c.Kind + "/" + key(c.Namespace, c.Name)
	if c.ConfigMap == nil && c.Secret == nil {
		delete(m.objects, k)
	} else {
		m.objects[k] = ObjectChange{Kind: c.Kind, Namespace: c.Namespace, Name: c.Name, ConfigMap: c.ConfigMap.DeepCopy(), Secret: c.Secret.DeepCopy()}
	}
	m.saves++
	return nil
}

// LoadObjects returns deep copies of the stored objects.
func (m *MemoryPersister) LoadObjects(_ context.Context) ([]ObjectChange, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ObjectChange, 0, len(m.objects))
	for _, c := range m.objects {
		out = append(out, ObjectChange{Kind: c.Kind, Namespace: c.Namespace, Name: c.Name, ConfigMap: c.ConfigMap.DeepCopy(), Secret: c.Secret.DeepCopy()})
	}
	return out, nil
}

// Saves counts the successful Write calls.
func (m *MemoryPersister) Saves() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saves
}

// SetSaveErr makes every later Write fail with err (nil to succeed again).
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

// keyLocks serialises the changes to one pod, so that its write to the
// Persister happens outside Source.mu while no other change to the same
// pod can overtake it.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	mu    sync.Mutex
	users int
}

// lock locks k and returns the unlock.
func (l *keyLocks) lock(k string) func() {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*keyLock{}
	}
	kl := l.m[k]
	if kl == nil {
		kl = &keyLock{}
		l.m[k] = kl
	}
	kl.users++
	l.mu.Unlock()
	kl.mu.Lock()
	return func() {
		kl.mu.Unlock()
		l.mu.Lock()
		if kl.users--; kl.users == 0 {
			delete(l.m, k)
		}
		l.mu.Unlock()
	}
}
