package state

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
	v1 "k8s.io/api/core/v1"
)

// APIPodChange is one change to the stored pods applied through the local
// API: Pod stored under Namespace/Name, or that record removed when Pod is
// nil.
type APIPodChange struct {
	Namespace, Name string
	Pod             *v1.Pod
}

// apiPodWriter groups the changes of concurrent callers into one
// transaction (one disk sync): whoever finds no commit running commits
// what is pending, and changes that arrive meanwhile wait for the next
// commit.
type apiPodWriter struct {
	mu      sync.Mutex
	pending []pendingChange
	running bool
}

// pendingChange is a change encoded (value nil deletes) and the channel
// its commit's outcome goes to.
type pendingChange struct {
	key, value []byte
	done       chan error
}

// WriteAPIPod stores one change to the API pods and returns once it is on
// disk (or failed). Concurrent calls share a transaction; changes are
// applied in the order of the calls. It is the bbolt side of
// sources/apisource.Persister.
func (s *Store) WriteAPIPod(ctx context.Context, c APIPodChange) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var value []byte
	if c.Pod != nil {
		b, err := json.Marshal(c.Pod)
		if err != nil {
			return fmt.Errorf("saving api pod %s/%s: %w", c.Namespace, c.Name, err)
		}
		value = b
	}
	done := make(chan error, 1)
	w := &s.apiPods
	w.mu.Lock()
	w.pending = append(w.pending, pendingChange{key: []byte(c.Namespace + "/" + c.Name), value: value, done: done})
	lead := !w.running
	w.running = true
	w.mu.Unlock()
	if lead {
		s.commitAPIPods()
	}
	// The outcome is awaited even when ctx ends: the caller must know
	// whether the change is on disk.
	if err := <-done; err != nil {
		return fmt.Errorf("saving api pod %s/%s: %w", c.Namespace, c.Name, err)
	}
	return nil
}

// commitAPIPods commits what is pending, once; when more arrived
// meanwhile, another goroutine commits it, so that no caller waits for
// others' commits after its own.
func (s *Store) commitAPIPods() {
	w := &s.apiPods
	w.mu.Lock()
	batch := w.pending
	w.pending = nil
	w.mu.Unlock()
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAPIPods)
		for _, p := range batch {
			var err error
			if p.value == nil {
				err = b.Delete(p.key)
			} else {
				err = b.Put(p.key, p.value)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	for _, p := range batch {
		p.done <- err
	}
	w.mu.Lock()
	more := len(w.pending) > 0
	w.running = more
	w.mu.Unlock()
	if more {
		go s.commitAPIPods()
	}
}

// LoadAPIPods returns the stored pods applied through the local API. A
// record that does not decode is an error naming it: the caller decides
// whether to start without it.
func (s *Store) LoadAPIPods(ctx context.Context) ([]*v1.Pod, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var pods []*v1.Pod
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAPIPods).ForEach(func(k, v []byte) error {
			var p v1.Pod
			if err := json.Unmarshal(v, &p); err != nil {
				return fmt.Errorf("%w: api pod %s: %v", ErrCorruptRecord, k, err)
			}
			pods = append(pods, &p)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("loading api pods: %w", err)
	}
	return pods, nil
}
