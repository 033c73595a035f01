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
//
// The cache holds only pods the runtime holds something of. An entry that
// shows the pod gone (no container, no ready sandbox: what an unknown pod
// reads as) stays only until the cache's time reaches the moment it was
// observed, and goes then: from that time on, the answer for an unknown
// pod is the same one, so no reader is served an older record than before
// (a worker waiting for a status newer than its last sync gets the gone
// pod's status as soon as it was observed). A failed inspection's entry
// stays until an inspection succeeds.
type Cache struct {
	mu        sync.Mutex
	pods      map[types.UID]cacheEntry
	gone      map[types.UID]struct{} // entries that show their pod gone
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
	return &Cache{pods: map[types.UID]cacheEntry{}, gone: map[types.UID]struct{}{}, changed: make(chan struct{})}
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

// Set records the status of a pod observed at modified. A status that
// shows the pod gone is dropped once the cache's time reaches modified.
func (c *Cache) Set(uid types.UID, status *PodStatus, err error, modified time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pods[uid] = cacheEntry{status: status, err: err, modified: modified}
	if err == nil && showsNothing(status) {
		c.gone[uid] = struct{}{}
	} else {
		delete(c.gone, uid)
	}
	c.pruneLocked()
	c.notifyLocked()
}

// forgetAbsent records, as observed at t, that every cached pod not in
// present is gone: a listing of the runtime taken after t holds nothing
// of it. Failed inspections and entries observed after t are kept.
func (c *Cache) forgetAbsent(present map[types.UID]*RunningPod, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid, e := range c.pods {
		if _, ok := present[uid]; ok || e.err != nil || e.modified.After(t) {
			continue
		}
		if _, ok := c.gone[uid]; ok {
			continue
		}
		st := &PodStatus{ID: uid}
		if e.status != nil {
			st.Name, st.Namespace = e.status.Name, e.status.Namespace
		}
		c.pods[uid] = cacheEntry{status: st, modified: t}
		c.gone[uid] = struct{}{}
	}
	c.pruneLocked()
	c.notifyLocked()
}

// UpdateTime advances the global timestamp: every pod is known to be
// current as of t. Entries of gone pods observed at or before t go.
func (c *Cache) UpdateTime(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.timestamp) {
		c.timestamp = t
	}
	c.pruneLocked()
	c.notifyLocked()
}

// pruneLocked drops the entries of gone pods that the global timestamp
// vouches for: for every t, the entry is newer than t only if the
// timestamp is, and then both give an empty status.
func (c *Cache) pruneLocked() {
	for uid := range c.gone {
		if e := c.pods[uid]; !e.modified.After(c.timestamp) {
			delete(c.pods, uid)
			delete(c.gone, uid)
		}
	}
}

func (c *Cache) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// showsNothing reports a status with nothing of the pod in it: no
// container and no ready sandbox (and so no IP), as for a pod the runtime
// does not hold.
func showsNothing(s *PodStatus) bool {
	return s != nil && !s.SandboxReady && len(s.ContainerStatuses) == 0 && len(s.IPs) == 0
}
