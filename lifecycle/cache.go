package lifecycle

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Cache holds the newest runtime status of every pod with the time it was
// observed. The PLEG writes it; workers read it with GetNewerThan so that
// they never act on a status older than their own last action. It is safe
// for concurrent use.
type Cache struct {
	mu        sync.Mutex
	pods      map[types.UID]cacheEntry
	timestamp time.Time
	changed   chan struct{} // closed and replaced on every write
}

type cacheEntry struct {
	status   *PodStatus
	err      error
	modified time.Time
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{pods: map[types.UID]cacheEntry{}, changed: make(chan struct{})}
}

// Get returns the cached status; an unknown pod gives an empty status.
func (c *Cache) Get(uid types.UID) (*PodStatus, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.pods[uid]
	if !ok {
		return &PodStatus{ID: uid}, nil
	}
	return e.status, e.err
}

// GetNewerThan blocks until the pod's entry, or the whole cache, is newer
// than t, then returns the pod's status. It returns ctx.Err() if ctx ends
// first.
func (c *Cache) GetNewerThan(ctx context.Context, uid types.UID, t time.Time) (*PodStatus, error) {
	for {
		c.mu.Lock()
		e, ok := c.pods[uid]
		if (ok && e.modified.After(t)) || c.timestamp.After(t) {
			c.mu.Unlock()
			if !ok {
				return &PodStatus{ID: uid}, nil
			}
			return e.status, e.err
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		}
	}
}

// Set records the status of a pod observed at modified.
func (c *Cache) Set(uid types.UID, status *PodStatus, err error, modified time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pods[uid] = cacheEntry{status: status, err: err, modified: modified}
	c.notifyLocked()
}

// Delete forgets a pod.
func (c *Cache) Delete(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pods, uid)
}

// UpdateTime advances the global timestamp: every pod is known to be
// current as of t.
func (c *Cache) UpdateTime(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.timestamp) {
		c.timestamp = t
	}
	c.notifyLocked()
}

func (c *Cache) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}
