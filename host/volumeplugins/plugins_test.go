package volumeplugins

import (
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
)

// TestUnpublishCleansSubPaths: the unpublish of a volume of any kind
// first removes the volume's subPath targets of the pod's containers
// (here a hostPath's, which has no pod volume directory), and an error
// doing so fails the unpublish before the volume is touched.
func TestUnpublishCleansSubPaths(t *testing.T) {
	root := t.TempDir()
	table := mountPoints{}
	p := &Plugins{host: hostvolumes.New(root, table)}
	pv := volumemanager.PodVolume{Pod: "uid-1", Name: "logs", Volume: volumemanager.Volume{
		Plugin: volumemanager.PluginHostPath, HostPath: &v1.HostPathVolumeSource{Path: t.TempDir()}}}
	target := hostvolumes.SubPathTarget(root, pv.Pod, pv.Name, "c", 0)
	if err := os.MkdirAll(target, 0o750); err != nil {
		t.Fatal(err)
	}
	// A target that still shows the volume (the fake's unmount leaves
	// it a mount point) is not removed: the unpublish fails.
	table[target] = true
	if err := os.WriteFile(filepath.Join(target, "in-the-volume"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.Unpublish(t.Context(), pv); err == nil {
		t.Fatal("unpublish with a target that stays mounted succeeded")
	}
	if _, err := os.Stat(filepath.Join(target, "in-the-volume")); err != nil {
		t.Fatalf("the cleanup removed what the target showed: %v", err)
	}

	table[target] = false
	if err := os.Remove(filepath.Join(target, "in-the-volume")); err != nil {
		t.Fatal(err)
	}
	if err := p.Unpublish(t.Context(), pv); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(hostvolumes.PodDir(root, pv.Pod)); err == nil {
		t.Errorf("the pod's directory is left after its only subPath target was removed")
	}
}
