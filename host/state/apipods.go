package state

import (
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
	v1 "k8s.io/api/core/v1"
)

// SaveAPIPods replaces the stored set of pods applied through the local
// API, so that they survive a restart of the host. It is the bbolt side of
// sources/apisource.Persister.
func (s *Store) SaveAPIPods(ctx context.Context, pods []*v1.Pod) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketAPIPods); err != nil {
			return err
		}
		b, err := tx.CreateBucket(bucketAPIPods)
		if err != nil {
			return err
		}
		for _, p := range pods {
			if err := putJSON(b, []byte(p.Namespace+"/"+p.Name), p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("saving api pods: %w", err)
	}
	return nil
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
