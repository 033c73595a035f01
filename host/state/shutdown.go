package state

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	bolt "go.etcd.io/bbolt"
)

// keyShutdown holds the node shutdown mark in the meta bucket.
var keyShutdown = []byte("nodeShutdown")

// ShutdownMark records a node shutdown done by the host (`podhost node
// shutdown`): which boot it happened in and which pods it stopped. The host
// reads it at start to start those pods again instead of taking them for
// failed, then clears it.
type ShutdownMark struct {
	// BootID is /proc/sys/kernel/random/boot_id when the shutdown began.
	BootID string `json:"bootID"`
	// Started and Finished bound the shutdown; Finished is zero while the
	// pods are being stopped (or if the host died meanwhile).
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	// GracePeriod is the shutdown's budget.
	GracePeriod time.Duration `json:"gracePeriod"`
	// Pods are the UIDs of the pods the shutdown stopped.
	Pods []types.UID `json:"pods"`
}

// PutShutdownMark records (or replaces) the node shutdown mark.
func (s *Store) PutShutdownMark(ctx context.Context, m ShutdownMark) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding node shutdown mark: %w", err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyShutdown, b) }); err != nil {
		return fmt.Errorf("writing node shutdown mark: %w", err)
	}
	return nil
}

// ShutdownMark returns the node shutdown mark; ok is false when there is
// none. An unreadable mark is an error wrapping ErrCorruptRecord.
func (s *Store) ShutdownMark(ctx context.Context) (m ShutdownMark, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return ShutdownMark{}, false, err
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketMeta).Get(keyShutdown)
		if v == nil {
			return nil
		}
		ok = true
		if err := json.Unmarshal(v, &m); err != nil {
			return fmt.Errorf("%w: node shutdown mark: %w", ErrCorruptRecord, err)
		}
		return nil
	})
	return m, ok, err
}

// ClearShutdownMark removes the node shutdown mark.
func (s *Store) ClearShutdownMark(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keyShutdown) }); err != nil {
		return fmt.Errorf("clearing node shutdown mark: %w", err)
	}
	return nil
}
