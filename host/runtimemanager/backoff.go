package runtimemanager

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Crash back-off of a container: the first restart after a crash waits
// BackOffInitial, each further one twice as long, at most BackOffMax. A
// container whose last run lasted BackOffReset or longer starts again
// from BackOffInitial.
const (
	BackOffInitial = 10 * time.Second
	BackOffMax     = 5 * time.Minute
	BackOffReset   = 10 * time.Minute
)

// backOffEntry is the back-off decided for one exit of a container: the
// restart after the exit that finished at finishedAt waits delay.
type backOffEntry struct {
	delay      time.Duration
	finishedAt time.Time
}

// backOffKey identifies a container of a pod.
type backOffKey struct {
	uid  types.UID
	name string
}

// nextBackOff decides the back-off of a container that exited (started at
// startedAt, finished at finishedAt) and should restart. prev is the entry
// of the container's previous exit, if any. It is pure: the caller stores
// the returned entry.
func nextBackOff(prev backOffEntry, hasPrev bool, startedAt, finishedAt time.Time) backOffEntry {
	if hasPrev && prev.finishedAt.Equal(finishedAt) {
		return prev // this exit was already decided
	}
	delay := BackOffInitial
	ranLong := !startedAt.IsZero() && finishedAt.Sub(startedAt) >= BackOffReset
	if hasPrev && !ranLong {
		delay = min(prev.delay*2, BackOffMax)
	}
	return backOffEntry{delay: delay, finishedAt: finishedAt}
}

// backOffs stores the back-off entries of every container, keyed by pod
// UID and container name. It is safe for concurrent use.
type backOffs struct {
	mu      sync.Mutex
	entries map[backOffKey]backOffEntry
}

// snapshot returns the entries of one pod by container name.
func (b *backOffs) snapshot(uid types.UID) map[string]backOffEntry {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]backOffEntry{}
	for k, e := range b.entries {
		if k.uid == uid {
			out[k.name] = e
		}
	}
	return out
}

// record stores entries of one pod.
func (b *backOffs) record(uid types.UID, entries map[string]backOffEntry) {
	if len(entries) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.entries == nil {
		b.entries = map[backOffKey]backOffEntry{}
	}
	for name, e := range entries {
		b.entries[backOffKey{uid, name}] = e
	}
}

// forget drops every entry of a pod.
func (b *backOffs) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.entries {
		if k.uid == uid {
			delete(b.entries, k)
		}
	}
}
