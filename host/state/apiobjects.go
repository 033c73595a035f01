package state

import (
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
	v1 "k8s.io/api/core/v1"
)

// APIObject is a ConfigMap or a Secret applied through the local API, as
// stored: one of the two is set.
type APIObject struct {
	ConfigMap *v1.ConfigMap `json:"configMap,omitempty"`
	Secret    *v1.Secret    `json:"secret,omitempty"`
}

// key is the object's record key, "ConfigMap/ns/name" or "Secret/ns/name".
func (o APIObject) key() string {
	if o.Secret != nil {
		return "Secret/" + o.Secret.Namespace + "/" + o.Secret.Name
	}
	return "ConfigMap/" + o.ConfigMap.Namespace + "/" + o.ConfigMap.Name
}

// WriteAPIObject stores obj, or with remove the record of kind
// ("ConfigMap" or "Secret") namespace/name, and returns once it is on
// disk. It is the bbolt side of sources/apisource.Persister's objects.
// The state file holds a Secret's data as the manifest directory does:
// readable by the host's user only.
func (s *Store) WriteAPIObject(ctx context.Context, kind, namespace, name string, obj *APIObject) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k := []byte(kind + "/" + namespace + "/" + name)
	var value []byte
	if obj != nil {
		if obj.key() != string(k) {
			return fmt.Errorf("saving api object %s: the record is %s", k, obj.key())
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("saving api object %s: %w", k, err)
		}
		value = b
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAPIObjects)
		if value == nil {
			return b.Delete(k)
		}
		return b.Put(k, value)
	})
	if err != nil {
		return fmt.Errorf("saving api object %s: %w", k, err)
	}
	return nil
}

// LoadAPIObjects returns the stored ConfigMaps and Secrets, by key. A
// record that does not decode is an error naming it.
func (s *Store) LoadAPIObjects(ctx context.Context) ([]APIObject, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []APIObject
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAPIObjects).ForEach(func(k, v []byte) error {
			var o APIObject
			if err := json.Unmarshal(v, &o); err != nil || (o.ConfigMap == nil) == (o.Secret == nil) || o.key() != string(k) {
				return fmt.Errorf("%w: api object %s", ErrCorruptRecord, k)
			}
			out = append(out, o)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("loading api objects: %w", err)
	}
	return out, nil
}
