package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// recordVersion is the encoding version of a pod record value.
const recordVersion = 1

// ErrCorruptRecord means a value in the database cannot be decoded. The
// database itself is sound; only that entry is lost.
var ErrCorruptRecord = errors.New("corrupt state record")

// PodRecord is what the store holds about one pod name.
type PodRecord struct {
	Namespace string
	Name      string
	UID       types.UID
	Status    v1.PodStatus
	// Terminal is true when Status.Phase is Succeeded or Failed.
	Terminal bool
	// Updated is when the record was last written.
	Updated time.Time
}

// podValue is the stored form of a PodRecord; the key carries the name.
type podValue struct {
	V        int          `json:"v"`
	UID      types.UID    `json:"uid"`
	Status   v1.PodStatus `json:"status"`
	Terminal bool         `json:"terminal"`
	Updated  time.Time    `json:"updated"`
}

// isTerminal reports whether a phase is one a pod never leaves.
func isTerminal(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

func podKey(namespace, name string) []byte { return []byte(namespace + "/" + name) }

// splitPodKey is the inverse of podKey. Namespaces cannot contain '/'.
func splitPodKey(k []byte) (namespace, name string, err error) {
	namespace, name, ok := strings.Cut(string(k), "/")
	if !ok || name == "" {
		return "", "", fmt.Errorf("pod key %q: %w", k, ErrCorruptRecord)
	}
	return namespace, name, nil
}

func encodeRecord(r PodRecord) ([]byte, error) {
	b, err := json.Marshal(podValue{V: recordVersion, UID: r.UID, Status: r.Status, Terminal: r.Terminal, Updated: r.Updated.UTC()})
	if err != nil {
		return nil, fmt.Errorf("encoding pod record: %w", err)
	}
	return b, nil
}

// decodeRecord decodes a pod value. Namespace and name come from the key and
// are left empty. Unknown fields and trailing data are errors.
func decodeRecord(b []byte) (PodRecord, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var v podValue
	if err := dec.Decode(&v); err != nil {
		return PodRecord{}, fmt.Errorf("%w: %w", ErrCorruptRecord, err)
	}
	if dec.More() {
		return PodRecord{}, fmt.Errorf("%w: trailing data", ErrCorruptRecord)
	}
	switch {
	case v.V != recordVersion:
		return PodRecord{}, fmt.Errorf("%w: record version %d, want %d", ErrCorruptRecord, v.V, recordVersion)
	case v.UID == "":
		return PodRecord{}, fmt.Errorf("%w: empty uid", ErrCorruptRecord)
	case v.Terminal != isTerminal(v.Status.Phase):
		return PodRecord{}, fmt.Errorf("%w: terminal=%t but phase %q", ErrCorruptRecord, v.Terminal, v.Status.Phase)
	}
	return PodRecord{UID: v.UID, Status: v.Status, Terminal: v.Terminal, Updated: v.Updated}, nil
}

// History is what the store remembers about a pod UID after its record is
// replaced or deleted.
type History struct {
	UID       types.UID `json:"uid"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	// Finished is set once a terminal status was written for the UID and is
	// never cleared: a terminal pod stays terminal.
	Finished bool `json:"finished,omitempty"`
	// Phase is the terminal phase, when Finished.
	Phase v1.PodPhase `json:"phase,omitempty"`
	// RestartCounts is the last restart count written per container name
	// (init and regular containers share the map; names are unique in a pod).
	RestartCounts map[string]int32 `json:"restartCounts,omitempty"`
	Updated       time.Time        `json:"updated"`
}

func decodeHistory(b []byte) (History, error) {
	var h History
	if err := json.Unmarshal(b, &h); err != nil {
		return History{}, fmt.Errorf("%w: history: %w", ErrCorruptRecord, err)
	}
	if h.UID == "" {
		return History{}, fmt.Errorf("%w: history: empty uid", ErrCorruptRecord)
	}
	return h, nil
}
