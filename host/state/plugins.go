package state

import (
	"context"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/podhost/podhost/lifecycle"
)

// PutPlugin records a plugin that passed its start checks. Started is set
// to now when zero.
func (s *Store) PutPlugin(ctx context.Context, p PluginRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.Name == "" {
		return errors.New("recording plugin: empty name")
	}
	if p.Started.IsZero() {
		p.Started = s.now()
	}
	p.Started = p.Started.UTC()
	err := s.db.Update(func(tx *bolt.Tx) error {
		return putJSON(tx.Bucket(bucketPlugins), []byte(p.Name), p)
	})
	if err != nil {
		return fmt.Errorf("recording plugin %s: %w", p.Name, err)
	}
	return nil
}

// Plugin returns the record of one plugin; lifecycle.ErrNotFound if none.
func (s *Store) Plugin(ctx context.Context, name string) (PluginRecord, error) {
	if err := ctx.Err(); err != nil {
		return PluginRecord{}, err
	}
	var p PluginRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketPlugins).Get([]byte(name))
		if v == nil {
			return lifecycle.ErrNotFound
		}
		var err error
		p, err = decodePlugin(v)
		return err
	})
	if err != nil {
		return PluginRecord{}, fmt.Errorf("plugin %s: %w", name, err)
	}
	return p, nil
}

// Plugins returns every plugin record, ordered by name; unreadable records
// are skipped with a warning.
func (s *Store) Plugins(ctx context.Context) ([]PluginRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []PluginRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPlugins).ForEach(func(k, v []byte) error {
			p, err := decodePlugin(v)
			if err != nil {
				s.log.Warn("skipping unreadable plugin record", "plugin", string(k), "err", err)
				return nil
			}
			out = append(out, p)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("listing plugins: %w", err)
	}
	return out, nil
}
