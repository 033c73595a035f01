package volumeplugins

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
)

// mountPoints is a hostvolumes.Mounter whose mount table is a set.
type mountPoints map[string]bool

func (m mountPoints) MountTmpfs(string, int64) error         { return nil }
func (m mountPoints) BindFD(int, string) error               { return nil }
func (m mountPoints) Unmount(string) error                   { return nil }
func (m mountPoints) IsMountPoint(path string) (bool, error) { return m[path], nil }

// TestInPlace: which pod volumes must be mount points to be in place.
func TestInPlace(t *testing.T) {
	root := "/r"
	csi := volumemanager.Volume{Plugin: volumemanager.PluginCSI, Shared: true, CSI: &v1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}
	block := csi
	block.Block = true
	tests := []struct {
		name   string
		vol    volumemanager.Volume
		mounts []string
		want   bool
	}{
		{"csi mounted", csi, []string{"/r/pods/u1/volumes/kubernetes.io~csi/v/mount"}, true},
		{"csi a plain directory", csi, nil, false},
		{"csi block mapped", block, []string{"/r/pods/u1/volumeDevices/kubernetes.io~csi/v"}, true},
		{"csi block a plain file", block, nil, false},
		{"iscsi a plain directory", volumemanager.Volume{Plugin: volumemanager.PluginISCSI, Shared: true}, nil, false},
		{"tmpfs emptyDir gone", volumemanager.Volume{Plugin: volumemanager.PluginEmptyDir, EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}, nil, false},
		{"disk emptyDir", volumemanager.Volume{Plugin: volumemanager.PluginEmptyDir, EmptyDir: &v1.EmptyDirVolumeSource{}}, nil, true},
		{"hostPath", volumemanager.Volume{Plugin: volumemanager.PluginHostPath}, nil, true},
		{"projected", volumemanager.Volume{Plugin: volumemanager.PluginProjected}, nil, true},
		{"placeholder", volumemanager.Volume{Plugin: volumemanager.PluginCSI, Unresolved: true}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := mountPoints{}
			for _, m := range tt.mounts {
				table[m] = true
			}
			p := &Plugins{host: hostvolumes.New(root, table)}
			got, err := p.InPlace(context.Background(), volumemanager.PodVolume{Pod: "u1", Name: "v", Volume: tt.vol})
			if err != nil || got != tt.want {
				t.Errorf("InPlace %v, %v; want %v (table %s)", got, err, tt.want, strings.Join(tt.mounts, ","))
			}
		})
	}
}
