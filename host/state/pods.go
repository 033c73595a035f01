package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	bolt "go.etcd.io/bbolt"

	"github.com/podhost/podhost/lifecycle"
)

var _ lifecycle.StatusSink = (*Store)(nil)

// Track registers the pod with this UID under its name, as creating it in
// the API server would: the status sink only accepts statuses for tracked
// pods. It is a no-op when the name already holds this UID. A name that
// holds another UID is taken over (that UID's History is kept); replaced
// reports it. The new record has phase Pending, unless the UID's history
// says it finished, in which case its terminal phase is restored.
func (s *Store) Track(ctx context.Context, namespace, name string, uid types.UID) (replaced bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		replaced, err = trackTx(tx, PodRef{Namespace: namespace, Name: name, UID: uid}, s.now())
		return err
	})
	if err != nil {
		return false, fmt.Errorf("tracking pod %s/%s: %w", namespace, name, err)
	}
	return replaced, nil
}

// PodRef names one pod to track.
type PodRef struct {
	Namespace, Name string
	UID             types.UID
}

// TrackAll tracks every pod as Track does, in one transaction: the pods a
// change of the desired set creates cost one commit, not one each. When it
// fails nothing of it is stored.
func (s *Store) TrackAll(ctx context.Context, pods []PodRef) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(pods) == 0 {
		return nil
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		now := s.now()
		for _, p := range pods {
			if _, err := trackTx(tx, p, now); err != nil {
				return fmt.Errorf("tracking pod %s/%s: %w", p.Namespace, p.Name, err)
			}
		}
		return nil
	})
}

func trackTx(tx *bolt.Tx, p PodRef, now time.Time) (replaced bool, err error) {
	if p.UID == "" {
		return false, errors.New("empty uid")
	}
	pods := tx.Bucket(bucketPods)
	key := podKey(p.Namespace, p.Name)
	if v := pods.Get(key); v != nil {
		old, err := decodeRecord(v)
		if err == nil && old.UID == p.UID {
			return false, nil
		}
		replaced = err == nil
	}
	rec := PodRecord{UID: p.UID, Status: v1.PodStatus{Phase: v1.PodPending}, Updated: now}
	if h, ok, err := getHistory(tx, p.UID); err == nil && ok && h.Finished {
		rec.Status.Phase, rec.Terminal = h.Phase, true
	}
	return replaced, putRecord(pods, key, rec)
}

// Get returns the stored pod: its namespace, name, UID and last status (no
// spec). An unknown name gives an error wrapping lifecycle.ErrNotFound.
func (s *Store) Get(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	rec, err := s.Pod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: rec.UID},
		Status:     rec.Status,
	}, nil
}

// Pod returns the stored record of one pod name; lifecycle.ErrNotFound if
// there is none.
func (s *Store) Pod(ctx context.Context, namespace, name string) (PodRecord, error) {
	if err := ctx.Err(); err != nil {
		return PodRecord{}, err
	}
	var rec PodRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketPods).Get(podKey(namespace, name))
		if v == nil {
			return lifecycle.ErrNotFound
		}
		var err error
		rec, err = decodeRecord(v)
		return err
	})
	if err != nil {
		return PodRecord{}, fmt.Errorf("pod %s/%s: %w", namespace, name, err)
	}
	rec.Namespace, rec.Name = namespace, name
	return rec, nil
}

// Forget does nothing: the store keeps nothing of what Get read.
func (s *Store) Forget(types.UID) {}

// Put stores the status of the tracked pod with this UID, and records in
// the UID's History the container restart counts and, for a terminal
// phase, that the pod finished. An untracked name gives an error wrapping
// lifecycle.ErrNotFound, another UID one wrapping lifecycle.ErrUIDMismatch.
func (s *Store) Put(ctx context.Context, namespace, name string, uid types.UID, status v1.PodStatus) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		pods := tx.Bucket(bucketPods)
		key := podKey(namespace, name)
		if err := matchUID(pods.Get(key), uid); err != nil {
			return err
		}
		now := s.now()
		rec := PodRecord{UID: uid, Status: status, Terminal: isTerminal(status.Phase), Updated: now}
		if err := putRecord(pods, key, rec); err != nil {
			return err
		}
		return updateHistory(tx, namespace, name, uid, status, now)
	})
	if err != nil {
		return fmt.Errorf("writing status of pod %s/%s: %w", namespace, name, err)
	}
	return nil
}

// Delete removes the pod record if it holds this UID. The UID's History is
// kept (see ForgetHistory).
func (s *Store) Delete(ctx context.Context, namespace, name string, uid types.UID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		pods := tx.Bucket(bucketPods)
		key := podKey(namespace, name)
		if err := matchUID(pods.Get(key), uid); err != nil {
			return err
		}
		return pods.Delete(key)
	})
	if err != nil {
		return fmt.Errorf("deleting pod %s/%s: %w", namespace, name, err)
	}
	return nil
}

// List returns every pod record, ordered by namespace/name. Records that
// cannot be decoded are skipped with a warning.
func (s *Store) List(ctx context.Context) ([]PodRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []PodRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPods).ForEach(func(k, v []byte) error {
			ns, name, err := splitPodKey(k)
			if err == nil {
				var rec PodRecord
				if rec, err = decodeRecord(v); err == nil {
					rec.Namespace, rec.Name = ns, name
					out = append(out, rec)
					return nil
				}
			}
			s.log.Warn("skipping unreadable pod record", "pod", string(k), "err", err)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	return out, nil
}

// matchUID checks a stored pod value against the caller's UID.
func matchUID(v []byte, uid types.UID) error {
	if v == nil {
		return lifecycle.ErrNotFound
	}
	rec, err := decodeRecord(v)
	if err != nil {
		return err
	}
	if rec.UID != uid {
		return fmt.Errorf("stored uid %s, got %s: %w", rec.UID, uid, lifecycle.ErrUIDMismatch)
	}
	return nil
}

func putRecord(b *bolt.Bucket, key []byte, rec PodRecord) error {
	v, err := encodeRecord(rec)
	if err != nil {
		return err
	}
	return b.Put(key, v)
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", key, err)
	}
	return b.Put(key, data)
}
