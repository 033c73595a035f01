package volumeplugins

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/podhost/podhost/host/volumemanager"
)

// TestCSIOwnershipApplies is the kubelet's rule of when a writable CSI
// volume is given to the pod's fsGroup, by the driver's fsGroupPolicy.
func TestCSIOwnershipApplies(t *testing.T) {
	rwo, rwop, rwx := []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}, []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}
	vol := func(pv, fsType string, modes []v1.PersistentVolumeAccessMode) volumemanager.Volume {
		return volumemanager.Volume{Plugin: volumemanager.PluginCSI, PV: pv, AccessModes: modes, CSI: &v1.CSIPersistentVolumeSource{Driver: "d", FSType: fsType}}
	}
	const def = storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy
	tests := []struct {
		name   string
		v      volumemanager.Volume
		policy storagev1.FSGroupPolicy
		want   bool
	}{
		{"default, fsType, ReadWriteOnce", vol("pv", "ext4", rwo), def, true},
		{"default, fsType, ReadWriteOncePod", vol("pv", "ext4", rwop), def, true},
		{"default, fsType, ReadWriteMany", vol("pv", "ext4", rwx), def, false},
		{"default, fsType, no access modes", vol("pv", "ext4", nil), def, false},
		{"default, no fsType", vol("pv", "", rwo), def, false},
		{"default, inline with fsType", vol("", "ext4", nil), def, true},
		{"default, inline without fsType", vol("", "", nil), def, false},
		{"File, without fsType, ReadWriteMany", vol("pv", "", rwx), storagev1.FileFSGroupPolicy, true},
		{"None", vol("pv", "ext4", rwo), storagev1.NoneFSGroupPolicy, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := csiOwnershipApplies(tt.v, tt.policy); got != tt.want {
				t.Errorf("csiOwnershipApplies = %v, want %v", got, tt.want)
			}
		})
	}
}
