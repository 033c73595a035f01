package state

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	bolt "go.etcd.io/bbolt"
)

// History returns what the store remembers about a pod UID; ok is false
// when it remembers nothing.
func (s *Store) History(ctx context.Context, uid types.UID) (h History, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return History{}, false, err
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		h, ok, err = getHistory(tx, uid)
		return err
	})
	if err != nil {
		return History{}, false, fmt.Errorf("history of pod %s: %w", uid, err)
	}
	return h, ok, nil
}

// Finished returns the UIDs whose pods reached a terminal phase and the
// phase each reached. The host reads it at start so that those pods stay
// terminal even when the runtime no longer has their containers.
func (s *Store) Finished(ctx context.Context) (map[types.UID]v1.PodPhase, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := map[types.UID]v1.PodPhase{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketHistory).ForEach(func(k, v []byte) error {
			h, err := decodeHistory(v)
			if err != nil {
				s.log.Warn("skipping unreadable pod history", "uid", string(k), "err", err)
				return nil
			}
			if h.Finished {
				out[h.UID] = h.Phase
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("listing finished pods: %w", err)
	}
	return out, nil
}

// ForgetHistory drops the History of UIDs that no longer hold a pod record
// and were last updated before cutoff; it returns how many it dropped. The
// host calls it from housekeeping to bound the bucket.
func (s *Store) ForgetHistory(ctx context.Context, cutoff time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		live := map[types.UID]bool{}
		if err := tx.Bucket(bucketPods).ForEach(func(_, v []byte) error {
			if rec, err := decodeRecord(v); err == nil {
				live[rec.UID] = true
			}
			return nil
		}); err != nil {
			return err
		}
		hist := tx.Bucket(bucketHistory)
		var drop [][]byte
		if err := hist.ForEach(func(k, v []byte) error {
			h, err := decodeHistory(v)
			if err != nil || (!live[h.UID] && h.Updated.Before(cutoff)) {
				drop = append(drop, append([]byte(nil), k...))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range drop {
			if err := hist.Delete(k); err != nil {
				return err
			}
		}
		n = len(drop)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("forgetting pod history: %w", err)
	}
	return n, nil
}

func getHistory(tx *bolt.Tx, uid types.UID) (History, bool, error) {
	v := tx.Bucket(bucketHistory).Get([]byte(uid))
	if v == nil {
		return History{}, false, nil
	}
	h, err := decodeHistory(v)
	if err != nil {
		return History{}, false, err
	}
	return h, true, nil
}

// updateHistory folds a written status into the UID's History. Finished is
// sticky: a later non-terminal status does not clear it.
func updateHistory(tx *bolt.Tx, namespace, name string, uid types.UID, status v1.PodStatus, now time.Time) error {
	h, ok, err := getHistory(tx, uid)
	if err != nil || !ok {
		h = History{UID: uid}
	}
	h.Namespace, h.Name, h.Updated = namespace, name, now.UTC()
	if isTerminal(status.Phase) && !h.Finished {
		h.Finished, h.Phase = true, status.Phase
	}
	for _, list := range [][]v1.ContainerStatus{status.InitContainerStatuses, status.ContainerStatuses} {
		for _, c := range list {
			if h.RestartCounts == nil {
				h.RestartCounts = map[string]int32{}
			}
			if c.RestartCount > h.RestartCounts[c.Name] {
				h.RestartCounts[c.Name] = c.RestartCount
			}
		}
	}
	return putJSON(tx.Bucket(bucketHistory), []byte(uid), h)
}
