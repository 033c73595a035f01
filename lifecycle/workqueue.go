package lifecycle

import (
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// WorkQueue times the next sync of each pod: a map from UID to the time it
// becomes due. Enqueue overwrites; GetWork returns and removes due entries.
// It is safe for concurrent use.
type WorkQueue struct {
	mu    sync.Mutex
	clock Clock
	due   map[types.UID]time.Time
}

// NewWorkQueue returns an empty queue on the given clock.
func NewWorkQueue(clock Clock) *WorkQueue {
	return &WorkQueue{clock: clock, due: map[types.UID]time.Time{}}
}

// Enqueue makes the UID due after delay.
func (q *WorkQueue) Enqueue(uid types.UID, delay time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.due[uid] = q.clock.Now().Add(delay)
}

// GetWork returns, sorted, and removes every UID whose time has come.
func (q *WorkQueue) GetWork() []types.UID {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	var out []types.UID
	for uid, t := range q.due {
		if !t.After(now) {
			out = append(out, uid)
			delete(q.due, uid)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Due returns when the UID is due, for tests.
func (q *WorkQueue) Due(uid types.UID) (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t, ok := q.due[uid]
	return t, ok
}
