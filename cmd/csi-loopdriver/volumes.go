package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

// volume is a created volume: a sparse image file of CapacityBytes.
type volume struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	CapacityBytes int64  `json:"capacityBytes"`
}

// volumeStore keeps the volumes under dir: <id>.img, the image, and
// <id>.json, its metadata, written last so that a volume exists once
// its metadata does.
type volumeStore struct{ dir string }

// validID is the form of the volume IDs the driver hands out.
var validID = regexp.MustCompile(`^loop-[0-9a-f]{32}$`)

// volumeID is the ID of the volume named name: the same name always
// makes the same ID, which makes CreateVolume idempotent.
func volumeID(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "loop-" + hex.EncodeToString(sum[:16])
}

func (s volumeStore) imagePath(id string) string { return filepath.Join(s.dir, id+".img") }
func (s volumeStore) metaPath(id string) string  { return filepath.Join(s.dir, id+".json") }

// get returns the volume id; errNotFound for an unknown or malformed ID.
func (s volumeStore) get(id string) (volume, error) {
	if !validID.MatchString(id) {
		return volume{}, fmt.Errorf("volume %q: %w", id, errNotFound)
	}
	b, err := os.ReadFile(s.metaPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return volume{}, fmt.Errorf("volume %q: %w", id, errNotFound)
	} else if err != nil {
		return volume{}, fmt.Errorf("reading volume %s: %w", id, err)
	}
	var v volume
	if err := json.Unmarshal(b, &v); err != nil {
		return volume{}, fmt.Errorf("reading volume %s: %w", id, err)
	}
	return v, nil
}

// create makes the volume name of size bytes, or returns the existing one
// when its size is within [required, limit] (limit 0: no limit).
func (s volumeStore) create(name string, size, required, limit int64) (volume, error) {
	id := volumeID(name)
	v, err := s.get(id)
	switch {
	case err == nil:
		if v.CapacityBytes < required || (limit > 0 && v.CapacityBytes > limit) {
			return volume{}, fmt.Errorf("volume %q has %d bytes, outside the requested range: %w", name, v.CapacityBytes, errExists)
		}
		return v, nil
	case !errors.Is(err, errNotFound):
		return volume{}, err
	}
	if err := os.MkdirAll(s.dir, 0o750); err != nil {
		return volume{}, fmt.Errorf("creating volume dir: %w", err)
	}
	f, err := os.OpenFile(s.imagePath(id), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return volume{}, fmt.Errorf("creating image: %w", err)
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return volume{}, fmt.Errorf("sizing image: %w", err)
	}
	v = volume{ID: id, Name: name, CapacityBytes: size}
	if err := writeJSONFile(s.metaPath(id), v); err != nil {
		return volume{}, err
	}
	return v, nil
}

// remove deletes the volume's files; a missing volume is no error.
func (s volumeStore) remove(id string) error {
	if err := os.Remove(s.metaPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing volume %s: %w", id, err)
	}
	if err := os.Remove(s.imagePath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing image of %s: %w", id, err)
	}
	return nil
}

// writeJSONFile writes v to path atomically (temporary file, rename).
func writeJSONFile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	return nil
}

// volumeLocks lets one operation at a time work on a volume; a second
// gets errBusy (ABORTED), as the CSI spec asks.
type volumeLocks struct {
	mu   sync.Mutex
	held map[string]bool
}

func (l *volumeLocks) lock(id string) (unlock func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[id] {
		return nil, fmt.Errorf("volume %s: %w", id, errBusy)
	}
	if l.held == nil {
		l.held = map[string]bool{}
	}
	l.held[id] = true
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.held, id)
	}, nil
}

// capacityFor is the size of a new volume: required rounded up to a MiB
// (to 512 bytes when the limit leaves no room), at least minVolumeSize,
// def when nothing is required.
func capacityFor(required, limit, def int64) (int64, error) {
	if required < 0 || limit < 0 {
		return 0, fmt.Errorf("capacity_range: negative bytes: %w", errInvalid)
	}
	if limit > 0 && required > limit {
		return 0, fmt.Errorf("capacity_range: required_bytes %d above limit_bytes %d: %w", required, limit, errInvalid)
	}
	size := required
	if size == 0 {
		size = def
		if limit > 0 && limit < size {
			size = limit
		}
	}
	size = max(size, minVolumeSize)
	if up := roundUp(size, 1<<20); limit == 0 || up <= limit {
		size = up
	} else {
		size = roundUp(size, 512)
	}
	if limit > 0 && size > limit {
		return 0, fmt.Errorf("capacity_range: limit_bytes %d below the minimum volume of %d bytes: %w", limit, minVolumeSize, errOutOfRange)
	}
	return size, nil
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }
