package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// callRecord is one line of the call log: one finished call.
type callRecord struct {
	Start             time.Time `json:"start"`
	End               time.Time `json:"end"`
	RPC               string    `json:"rpc"`
	VolumeID          string    `json:"volume_id,omitempty"`
	StagingTargetPath string    `json:"staging_target_path,omitempty"`
	TargetPath        string    `json:"target_path,omitempty"`
	VolumePath        string    `json:"volume_path,omitempty"`
	// PublishContext is a NodeStage or NodePublish request's.
	PublishContext map[string]string `json:"publish_context,omitempty"`
	// VolumeContext is a NodeStage or NodePublish request's.
	VolumeContext map[string]string `json:"volume_context,omitempty"`
	// SecretKeys are the keys of a request's secrets, sorted: never the
	// values, which the log must not hold.
	SecretKeys []string `json:"secret_keys,omitempty"`
	// Code is the gRPC code name of the answer ("OK" on success).
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
	// Fault is the injected fault's action, empty when none applied.
	Fault string `json:"fault,omitempty"`
}

// callLog appends records to a JSON-lines file; a nil *callLog logs nothing.
type callLog struct {
	mu sync.Mutex
	f  *os.File
}

func openCallLog(path string) (*callLog, error) {
	if path == "" {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("opening call log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening call log: %w", err)
	}
	return &callLog{f: f}, nil
}

// write appends one record as one line, in a single write.
func (l *callLog) write(r callRecord) error {
	if l == nil {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding call record: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing call log: %w", err)
	}
	return nil
}

func (l *callLog) close() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}
