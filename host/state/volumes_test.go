package state

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podhost/podhost/host/volumemanager"
)

func volumeRecords() []volumemanager.Record {
	limit := resource.MustParse("16Mi")
	typ := v1.HostPathDirectoryOrCreate
	return []volumemanager.Record{
		{Volume: volumemanager.Volume{ID: "kubernetes.io/csi/drv^h1", Plugin: volumemanager.PluginCSI, Shared: true,
			CSI: &v1.CSIPersistentVolumeSource{Driver: "drv", VolumeHandle: "h1", VolumeAttributes: map[string]string{"size": "1Gi"}}},
			Device: volumemanager.Mounted,
			Pods:   []volumemanager.PodRecord{{Pod: "u1", Name: "data", State: volumemanager.Mounted}, {Pod: "u2", Name: "data", State: volumemanager.Uncertain}}},
		{Volume: volumemanager.Volume{ID: "kubernetes.io/empty-dir/u1-mem", Plugin: volumemanager.PluginEmptyDir,
			EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: &limit}},
			Pods: []volumemanager.PodRecord{{Pod: "u1", Name: "mem", State: volumemanager.Mounted}}},
		{Volume: volumemanager.Volume{ID: "kubernetes.io/host-path/u1-etc", Plugin: volumemanager.PluginHostPath,
			HostPath: &v1.HostPathVolumeSource{Path: "/etc", Type: &typ}},
			Pods: []volumemanager.PodRecord{{Pod: "u1", Name: "etc", State: volumemanager.Uncertain}}},
	}
}

// TestVolumesSurviveReopen saves, reopens and loads the volume state;
// a second save replaces the first.
func TestVolumesSurviveReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := openAt(t, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.LoadVolumes(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty database: %v, %v", got, err)
	}
	want := volumeRecords()
	if err := s.SaveVolumes(ctx, want); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = openAt(t, path, nil); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.LoadVolumes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("loaded %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Volume.EmptyDir != nil && got[i].Volume.EmptyDir.SizeLimit.Cmp(*want[i].Volume.EmptyDir.SizeLimit) == 0 {
			got[i].Volume.EmptyDir.SizeLimit = want[i].Volume.EmptyDir.SizeLimit // Quantity keeps a cached string
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if err := s.SaveVolumes(ctx, want[:1]); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LoadVolumes(ctx); err != nil || len(got) != 1 || got[0].Volume.ID != want[0].Volume.ID {
		t.Fatalf("after saving one record: %v, %v", got, err)
	}
}

// TestCorruptVolumeRecord checks that a record that does not decode, or
// holds a state that does not exist, is named in an error wrapping
// ErrCorruptRecord while the good records still load.
func TestCorruptVolumeRecord(t *testing.T) {
	tests := []struct {
		name, key, value, want string
	}{
		{"not json", "kubernetes.io/csi/drv^bad", "{not json", "volume kubernetes.io/csi/drv^bad"},
		{"unknown state", "kubernetes.io/csi/drv^bad", `{"volume":{"ID":"kubernetes.io/csi/drv^bad"},"device":7}`, "device state 7"},
		{"bad pod state", "kubernetes.io/csi/drv^bad", `{"volume":{"ID":"kubernetes.io/csi/drv^bad"},"pods":[{"Pod":"u","Name":"n","State":-1}]}`, "pod record"},
		{"key mismatch", "kubernetes.io/csi/drv^bad", `{"volume":{"ID":"other"}}`, `holds volume "other"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := openAt(t, filepath.Join(t.TempDir(), FileName), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.SaveVolumes(ctx, volumeRecords()); err != nil {
				t.Fatal(err)
			}
			if err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketVolumes).Put([]byte(tt.key), []byte(tt.value)) }); err != nil {
				t.Fatal(err)
			}
			got, err := s.LoadVolumes(ctx)
			if !errors.Is(err, ErrCorruptRecord) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want ErrCorruptRecord naming %q", err, tt.want)
			}
			if len(got) != len(volumeRecords()) {
				t.Errorf("loaded %d good records, want %d", len(got), len(volumeRecords()))
			}
		})
	}
}
