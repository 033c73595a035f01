package scsivolume

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/podhost/podhost/plugins/internal/scsi"
)

// Record is what the plugin keeps of one staged volume, written before
// the disk is mounted and removed once the disk is released.
type Record struct {
	VolumeID    string            `json:"volumeID"`
	StagingPath string            `json:"stagingPath"`
	Block       bool              `json:"block,omitempty"`
	FsType      string            `json:"fsType,omitempty"`
	Disk        scsi.Disk         `json:"disk"`
	Context     map[string]string `json:"context,omitempty"`
}

// records keeps Records as JSON files in dir, one per staging path.
type records struct{ dir string }

func (r records) file(stagingPath string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(stagingPath)))
	return filepath.Join(r.dir, hex.EncodeToString(sum[:])+".json")
}

// load returns the record of stagingPath, nil when there is none.
func (r records) load(stagingPath string) (*Record, error) {
	return readRecord(r.file(stagingPath))
}

func readRecord(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("reading volume record: %w", err)
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("decoding volume record %s: %w", path, err)
	}
	return &rec, nil
}

// save writes rec atomically.
func (r records) save(rec Record) error {
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return fmt.Errorf("creating state directory: %w", err)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(r.dir, ".record-*")
	if err != nil {
		return fmt.Errorf("writing volume record: %w", err)
	}
	_, err = f.Write(b)
	if err = errors.Join(err, f.Sync(), f.Close()); err == nil {
		err = os.Rename(f.Name(), r.file(rec.StagingPath))
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("writing volume record: %w", err)
	}
	return nil
}

// remove deletes the record of stagingPath; none is fine.
func (r records) remove(stagingPath string) error {
	if err := os.Remove(r.file(stagingPath)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing volume record: %w", err)
	}
	return nil
}

// all returns every record; one that cannot be read is an error.
func (r records) all() ([]Record, error) {
	entries, err := os.ReadDir(r.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("listing volume records: %w", err)
	}
	var recs []Record
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		rec, err := readRecord(filepath.Join(r.dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if rec != nil {
			recs = append(recs, *rec)
		}
	}
	return recs, nil
}
