package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// record is what the plugin keeps of a volume it publishes (or maps), from
// before the CSI call until Unpublish succeeds, so that Reconstruct can say
// after a host restart what is at a target path.
type record struct {
	TargetPath  string            `json:"targetPath"`
	Driver      string            `json:"driver"`
	VolumeID    string            `json:"volumeId"`
	StagingPath string            `json:"stagingPath,omitempty"`
	Context     map[string]string `json:"volumeContext,omitempty"`
	// Capability is the contract's capability, as the server encoded it.
	Capability json.RawMessage `json:"capability,omitempty"`
}

// recordPath is the file of the record for target under dir.
func recordPath(dir, target string) string {
	sum := sha256.Sum256([]byte(target))
	return filepath.Join(dir, "published", hex.EncodeToString(sum[:])+".json")
}

// saveRecord writes r atomically.
func saveRecord(dir string, r record) error {
	path := recordPath(dir, r.TargetPath)
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding record of %s: %w", r.TargetPath, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating state directory: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("writing record of %s: %w", r.TargetPath, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing record of %s: %w", r.TargetPath, err)
	}
	return nil
}

// loadRecord reads the record of target; false when there is none.
func loadRecord(dir, target string) (record, bool, error) {
	path := recordPath(dir, target)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return record{}, false, nil
	}
	if err != nil {
		return record{}, false, fmt.Errorf("reading record of %s: %w", target, err)
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil || r.TargetPath != target {
		return record{}, false, fmt.Errorf("record %s of %s is corrupt", path, target)
	}
	return r, true, nil
}

// removeRecord deletes the record of target; none is fine.
func removeRecord(dir, target string) error {
	if err := os.Remove(recordPath(dir, target)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing record of %s: %w", target, err)
	}
	return nil
}
