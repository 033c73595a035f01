package volumemanager

import (
	"context"
	"slices"
	"sync"
)

// Store keeps the actual state across host restarts. Save replaces what
// was saved; Load returns it (nothing saved: no records, no error).
// host/state's bbolt store implements it (SaveVolumes, LoadVolumes).
type Store interface {
	Save(ctx context.Context, recs []Record) error
	Load(ctx context.Context) ([]Record, error)
}

// MemoryStore is a Store in memory, for tests. The zero value is empty.
type MemoryStore struct {
	mu   sync.Mutex
	recs []Record
	// Saves counts the calls of Save.
	Saves int
}

// Save keeps a copy of recs.
func (s *MemoryStore) Save(_ context.Context, recs []Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = copyRecords(recs)
	s.Saves++
	return nil
}

// Load returns a copy of the last saved records.
func (s *MemoryStore) Load(context.Context) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyRecords(s.recs), nil
}

func copyRecords(recs []Record) []Record {
	out := slices.Clone(recs)
	for i := range out {
		out[i].Pods = slices.Clone(out[i].Pods)
	}
	return out
}
