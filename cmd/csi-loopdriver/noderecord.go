package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// nodeRecord is what the node has done with a volume, kept in the state
// dir so that a restarted driver knows it. It is written before the
// mounts it describes are made, so that it covers whatever a failed or
// interrupted call may have left; the kernel (mount table, loop devices)
// says what really is there.
type nodeRecord struct {
	// StagingPath is where the volume is staged; empty when the driver
	// does not stage (then the targets alone hold the loop device).
	StagingPath string `json:"stagingPath,omitempty"`
	Block       bool   `json:"block,omitempty"`
	// Targets are the publish targets by path.
	Targets map[string]targetRecord `json:"targets,omitempty"`
}

type targetRecord struct {
	ReadOnly     bool `json:"readOnly,omitempty"`
	Block        bool `json:"block,omitempty"`
	SingleWriter bool `json:"singleWriter,omitempty"`
	// Ephemeral: an inline volume the driver created for this target
	// alone (ephemeral.go); it is deleted when the target is unpublished.
	Ephemeral bool `json:"ephemeral,omitempty"`
}

func (d *driver) recordPath(id string) string { return filepath.Join(d.nodeDir, id+".json") }

// readRecord returns the volume's record; ok is false when it has none.
func (d *driver) readRecord(id string) (rec nodeRecord, ok bool, err error) {
	b, err := os.ReadFile(d.recordPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return nodeRecord{}, false, nil
	} else if err != nil {
		return nodeRecord{}, false, fmt.Errorf("reading node record of %s: %w", id, err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return nodeRecord{}, false, fmt.Errorf("reading node record of %s: %w", id, err)
	}
	return rec, true, nil
}

// writeRecord stores rec, or removes the record when rec holds nothing.
func (d *driver) writeRecord(id string, rec nodeRecord) error {
	if rec.StagingPath == "" && len(rec.Targets) == 0 {
		if err := os.Remove(d.recordPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing node record of %s: %w", id, err)
		}
		return nil
	}
	return writeJSONFile(d.recordPath(id), rec)
}
