package volumeplugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	"github.com/podhost/podhost/pluginapi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// TestSCSIPublishGivesTheVolumeToFSGroup: after the plugin publishes a
// writable iSCSI filesystem volume, what is in it belongs to the pod's
// fsGroup, as the kubelet's iSCSI plugin leaves it; a read-only one, and
// one of a pod without fsGroup, are left alone.
func TestSCSIPublishGivesTheVolumeToFSGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test changes file groups; run it as root")
	}
	group := int64(1234)
	vol := volumemanager.Volume{ID: "kubernetes.io/iscsi/p:3260:iqn.x:0", Plugin: volumemanager.PluginISCSI, Shared: true, PV: "i-pv",
		ISCSI: &v1.ISCSIPersistentVolumeSource{TargetPortal: "p:3260", IQN: "iqn.x"}}
	tests := []struct {
		name     string
		readOnly bool
		group    *int64
		want     uint32
	}{
		{"writable", false, &group, 1234},
		{"read-only", true, &group, 0},
		{"no fsGroup", false, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			host := hostvolumes.New(root, nil)
			cl := &scsiClient{caps: &volumev1.GetCapabilitiesResponse{StageUnstage: true}}
			s := &scsiVolumes{root: root, node: "node-1", host: host, clients: fakeClients{"p": cl}, plugins: []string{"p"},
				caps: declaring(map[string][]string{"p": {pluginapi.CapVolumeISCSI}})}
			v := vol
			v.ReadOnly = tt.readOnly
			pv := volumemanager.PodVolume{Pod: types.UID("u1"), Name: "data", Volume: v, Args: volumemanager.MountArgs{FSGroup: tt.group}}
			// What the plugin's publish mounts there: a filesystem with a file.
			file := filepath.Join(host.TargetPath(pv), "f")
			if err := os.MkdirAll(filepath.Dir(file), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := s.Publish(context.Background(), pv); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			if g := fi.Sys().(*syscall.Stat_t).Gid; g != tt.want {
				t.Errorf("group of a file in the volume %d, want %d", g, tt.want)
			}
		})
	}
}

// TestCSIPublishGivesTheVolumeToFSGroup: after the plugin publishes a
// writable CSI filesystem volume, it belongs to the pod's fsGroup when the
// driver's fsGroupPolicy says so (File here, None not); a policy that
// cannot be read fails the publish.
func TestCSIPublishGivesTheVolumeToFSGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test changes file groups; run it as root")
	}
	group := int64(1234)
	tests := []struct {
		name    string
		policy  storagev1.FSGroupPolicy
		err     error
		want    uint32
		wantErr bool
	}{
		{"File", storagev1.FileFSGroupPolicy, nil, 1234, false},
		{"None", storagev1.NoneFSGroupPolicy, nil, 0, false},
		{"policy unreadable", "", errors.New("apiserver down"), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			host := hostvolumes.New(root, nil)
			c := &csiVolumes{root: root, host: host, clients: fakeClients{"csi": &fakeVolumeClient{}}, routes: map[string]string{"loop": "csi"},
				policy: func(_ context.Context, driver string) (storagev1.FSGroupPolicy, error) {
					if driver != "loop" {
						t.Errorf("policy asked of driver %q, want loop", driver)
					}
					return tt.policy, tt.err
				}}
			pv := volumemanager.PodVolume{Pod: "u1", Name: "data", Args: volumemanager.MountArgs{FSGroup: &group}, Volume: volumemanager.Volume{
				ID: "kubernetes.io/csi/loop^h1", Plugin: volumemanager.PluginCSI, Shared: true, PV: "pv1",
				CSI: &v1.CSIPersistentVolumeSource{Driver: "loop", VolumeHandle: "h1"}}}
			file := filepath.Join(host.TargetPath(pv), "f")
			if err := os.MkdirAll(filepath.Dir(file), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			err := c.Publish(context.Background(), pv)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Publish: %v, want error %v", err, tt.wantErr)
			}
			fi, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			if g := fi.Sys().(*syscall.Stat_t).Gid; g != tt.want {
				t.Errorf("group of a file in the volume %d, want %d", g, tt.want)
			}
		})
	}
}
