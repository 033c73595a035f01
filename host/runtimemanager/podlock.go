package runtimemanager

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// podLocks serialise the calls that create or remove a pod's objects and
// log directory: SyncPod, RemovePod and the garbage collector's removals.
// The lifecycle never syncs one pod twice at a time, but the host removes
// a finished pod from a goroutine, and a static pod re-added with the same
// UID may start syncing while the old incarnation's removal runs; both
// work on the same labels and the same log directory. A lock is a channel
// so that waiting honours ctx.
type podLocks struct {
	mu    sync.Mutex
	locks map[types.UID]*podLock
}

type podLock struct {
	held  chan struct{} // a token in it means held
	users int           // holders and waiters; the entry goes at 0
}

// lock waits until the pod's lock is free or ctx is done, and returns the
// function that frees it.
func (l *podLocks) lock(ctx context.Context, uid types.UID) (func(), error) {
	pl := l.join(uid)
	select {
	case pl.held <- struct{}{}:
		return func() { <-pl.held; l.leave(uid, pl) }, nil
	case <-ctx.Done():
		l.leave(uid, pl)
		return nil, ctx.Err()
	}
}

// tryLock takes the pod's lock if it is free; ok is false otherwise.
func (l *podLocks) tryLock(uid types.UID) (unlock func(), ok bool) {
	pl := l.join(uid)
	select {
	case pl.held <- struct{}{}:
		return func() { <-pl.held; l.leave(uid, pl) }, true
	default:
		l.leave(uid, pl)
		return nil, false
	}
}

func (l *podLocks) join(uid types.UID) *podLock {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.locks == nil {
		l.locks = map[types.UID]*podLock{}
	}
	pl, ok := l.locks[uid]
	if !ok {
		pl = &podLock{held: make(chan struct{}, 1)}
		l.locks[uid] = pl
	}
	pl.users++
	return pl
}

func (l *podLocks) leave(uid types.UID, pl *podLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if pl.users--; pl.users == 0 {
		delete(l.locks, uid)
	}
}
