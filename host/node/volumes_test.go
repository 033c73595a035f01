package node

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	bolt "go.etcd.io/bbolt"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/events"
	"github.com/podhost/podhost/host/state"
	"github.com/podhost/podhost/host/volumemanager"
)

// TestVolumeStoreLeavesOutCorruptRecords checks that a corrupt volume
// record is logged and left out while the others are restored, instead
// of failing the whole reconstruction.
func TestVolumeStoreLeavesOutCorruptRecords(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), state.FileName)
	store, err := state.Open(path, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	good := volumemanager.Record{
		Volume: volumemanager.Volume{ID: "kubernetes.io/empty-dir/u1-a", Plugin: volumemanager.PluginEmptyDir},
		Pods:   []volumemanager.PodRecord{{Pod: "u1", Name: "a", State: volumemanager.Mounted}},
	}
	if err := store.SaveVolumes(ctx, []volumemanager.Record{good}); err != nil {
		t.Fatal(err)
	}
	store.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("volumes")).Put([]byte("kubernetes.io/csi/drv^x"), []byte("{garbage"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if store, err = state.Open(path, hclog.NewNullLogger()); err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var logs bytes.Buffer
	recs, err := volumeStore{store, hclog.New(&hclog.LoggerOptions{Output: &logs})}.Load(ctx)
	if err != nil || len(recs) != 1 || recs[0].Volume.ID != good.Volume.ID {
		t.Fatalf("Load: %v, %v; want the good record and no error", recs, err)
	}
	if !strings.Contains(logs.String(), "kubernetes.io/csi/drv^x") {
		t.Errorf("log %q; want the corrupt record named", logs.String())
	}
}

// TestVolumeEvents: the volume manager's events go on the pod (by name
// while it is desired, by UID after), or on the node for pod "", and a
// warning is logged too.
func TestVolumeEvents(t *testing.T) {
	tests := []struct {
		name string
		uid  types.UID
		want events.Object
	}{
		{name: "pod gone", uid: "u1", want: events.Object{Kind: events.KindPod, UID: "u1"}},
		{name: "the node", uid: "", want: events.Object{Kind: events.KindNode, Name: "node-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ring := events.New(events.Options{})
			var logs bytes.Buffer
			log := hclog.New(&hclog.LoggerOptions{Output: &logs})
			volumeEvents{desired: newDesiredSet(), ring: ring, node: "node-1", log: log}.Event(tt.uid, "Warning", "FailedUnmountDevice", "boom")
			got := ring.List(events.Filter{})
			if len(got) != 1 || got[0].Object != tt.want || got[0].Reason != "FailedUnmountDevice" {
				t.Errorf("events %+v; want one on %+v", got, tt.want)
			}
			if !strings.Contains(logs.String(), "[WARN]  volume: boom") {
				t.Errorf("log %q; want the warning at warn", logs.String())
			}
		})
	}
}
