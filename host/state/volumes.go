package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/podhost/podhost/host/volumemanager"
)

// volumeRecord is the stored form of one volume's actual state, keyed by
// its volume ID in the volumes bucket.
type volumeRecord struct {
	Volume volumemanager.Volume      `json:"volume"`
	Device volumemanager.MountState  `json:"device"`
	Pods   []volumemanager.PodRecord `json:"pods,omitempty"`
	// Boot is the boot ID the record was saved in.
	Boot string `json:"boot,omitempty"`
}

// SaveVolumes replaces the volume manager's saved actual state (the bbolt
// side of volumemanager.Store).
func (s *Store) SaveVolumes(ctx context.Context, recs []volumemanager.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketVolumes); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		b, err := tx.CreateBucket(bucketVolumes)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if r.Volume.ID == "" {
				return errors.New("a volume record without a volume ID")
			}
			if err := putJSON(b, []byte(r.Volume.ID), volumeRecord{r.Volume, r.Device, r.Pods, r.Boot}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("saving volume state: %w", err)
	}
	return nil
}

// LoadVolumes returns the saved volume records, sorted by volume ID. A
// record that does not decode, or holds a state that does not exist, is
// left out and named in the error, which wraps ErrCorruptRecord; the
// records that decode are returned with it.
func (s *Store) LoadVolumes(ctx context.Context) ([]volumemanager.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []volumemanager.Record
	var bad []error
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketVolumes)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			rec, err := decodeVolumeRecord(k, v)
			if err != nil {
				bad = append(bad, fmt.Errorf("%w: volume %s: %v", ErrCorruptRecord, k, err))
				return nil
			}
			out = append(out, rec)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("loading volume state: %w", err)
	}
	return out, errors.Join(bad...)
}

func decodeVolumeRecord(k, v []byte) (volumemanager.Record, error) {
	var r volumeRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return volumemanager.Record{}, err
	}
	if string(r.Volume.ID) != string(k) {
		return volumemanager.Record{}, fmt.Errorf("holds volume %q", r.Volume.ID)
	}
	valid := func(m volumemanager.MountState) bool {
		return m == volumemanager.NotMounted || m == volumemanager.Uncertain || m == volumemanager.Mounted
	}
	if !valid(r.Device) {
		return volumemanager.Record{}, fmt.Errorf("device state %d", r.Device)
	}
	for _, p := range r.Pods {
		if !valid(p.State) || p.Pod == "" || p.Name == "" {
			return volumemanager.Record{}, fmt.Errorf("pod record %+v", p)
		}
	}
	return volumemanager.Record{Volume: r.Volume, Device: r.Device, Pods: r.Pods, Boot: r.Boot}, nil
}
