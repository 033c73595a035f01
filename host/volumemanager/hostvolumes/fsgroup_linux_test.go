package hostvolumes

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/volumemanager"
)

func groupOf(t *testing.T, p string) uint32 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Gid
}

// TestEmptyDirFSGroup: an emptyDir of a pod with an fsGroup belongs to the
// group, with the setgid bit, and so does what is already in it (a
// publish again after a restart); a hostPath is never changed.
func TestEmptyDirFSGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test changes file groups; run it as root")
	}
	group := int64(1234)
	root := t.TempDir()
	h := New(root, newFakeMounter())
	pv := emptyDir("1", "cache", &v1.EmptyDirVolumeSource{})
	pv.Args.FSGroup = &group
	dir := PodVolumeDir(root, pv.Pod, volumemanager.PluginEmptyDir, "cache")
	if err := h.Publish(context.Background(), pv); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := fs.ModeDir | fs.ModeSetgid | 0o777; fi.Mode() != want {
		t.Errorf("mode %v, want %v", fi.Mode(), want)
	}
	if g := groupOf(t, dir); g != 1234 {
		t.Errorf("group %d, want 1234", g)
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(file, -1, 0); err != nil {
		t.Fatal(err)
	}
	if err := h.Publish(context.Background(), pv); err != nil {
		t.Fatal(err)
	}
	if g := groupOf(t, file); g != 1234 {
		t.Errorf("group of a file in it after a second publish %d, want 1234", g)
	}

	// A subPath created for a container mount has the root's mode and
	// group, as the kubelet creates it.
	for _, rootMode := range []fs.FileMode{0o777, 0o777 | fs.ModeSticky} {
		if err := os.Chmod(dir, rootMode|fs.ModeSetgid); err != nil {
			t.Fatal(err)
		}
		sub := filepath.Join(dir, "sub"+rootMode.String(), "deeper")
		fd, err := openSubPath(dir, "sub"+rootMode.String()+"/deeper")
		if err != nil {
			t.Fatal(err)
		}
		syscall.Close(fd)
		for _, p := range []string{sub, filepath.Dir(sub)} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if want := fs.ModeDir | fs.ModeSetgid | rootMode; fi.Mode() != want {
				t.Errorf("subPath %s: mode %v, want %v", p, fi.Mode(), want)
			}
			if g := groupOf(t, p); g != 1234 {
				t.Errorf("subPath %s: group %d, want 1234", p, g)
			}
		}
	}

	host := t.TempDir()
	hp := volumemanager.PodVolume{Pod: "uid-1", Name: "h", Args: pv.Args, Volume: volumemanager.Volume{
		Plugin: volumemanager.PluginHostPath, HostPath: &v1.HostPathVolumeSource{Path: host}}}
	if err := h.Publish(context.Background(), hp); err != nil {
		t.Fatal(err)
	}
	if g := groupOf(t, host); g != 0 {
		t.Errorf("hostPath group %d, want 0 (hostPath never changes ownership)", g)
	}
}
