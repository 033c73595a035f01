package hostvolumes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
)

// fakeMounter keeps a mount table in memory and records each call.
type fakeMounter struct {
	points map[string]bool
	binds  map[string]string // target: the source's path, of BindFD
	calls  []string
	fail   error
}

func newFakeMounter() *fakeMounter { return &fakeMounter{points: map[string]bool{}} }

func (f *fakeMounter) MountTmpfs(target string, size int64) error {
	f.calls = append(f.calls, "tmpfs "+filepath.Base(target)+" "+resource.NewQuantity(size, resource.BinarySI).String())
	if f.fail != nil {
		return f.fail
	}
	f.points[target] = true
	return nil
}

// BindFD records the path of the file open at fd as target's source.
func (f *fakeMounter) BindFD(fd int, target string) error {
	src, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		return err
	}
	f.calls = append(f.calls, "bind "+filepath.Base(target))
	if f.fail != nil {
		return f.fail
	}
	if f.binds == nil {
		f.binds = map[string]string{}
	}
	f.points[target], f.binds[target] = true, src
	return nil
}

func (f *fakeMounter) Unmount(target string) error {
	f.calls = append(f.calls, "unmount "+filepath.Base(target))
	delete(f.points, target)
	delete(f.binds, target)
	return nil
}

func (f *fakeMounter) IsMountPoint(path string) (bool, error) { return f.points[path], nil }

func emptyDir(uid, name string, src *v1.EmptyDirVolumeSource) volumemanager.PodVolume {
	return volumemanager.PodVolume{Pod: k8stypes.UID("uid-" + uid), Name: name, Volume: volumemanager.Volume{Plugin: volumemanager.PluginEmptyDir, EmptyDir: src}}
}

// TestEmptyDir sets up and tears down emptyDirs of both media: the
// directory (world-writable), the tmpfs with the size limit, and after
// teardown neither the mount nor the pod's directory.
func TestEmptyDir(t *testing.T) {
	limit := resource.MustParse("64Mi")
	tests := []struct {
		name      string
		src       *v1.EmptyDirVolumeSource
		wantCalls []string
	}{
		{"disk", &v1.EmptyDirVolumeSource{}, nil},
		{"memory", &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}, []string{"tmpfs cache 0", "unmount cache"}},
		{"memory with limit", &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: &limit}, []string{"tmpfs cache 64Mi", "unmount cache"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, m := t.TempDir(), newFakeMounter()
			h := New(root, m)
			pv := emptyDir("1", "cache", tt.src)
			for range 2 { // idempotent
				if err := h.Publish(context.Background(), pv); err != nil {
					t.Fatal(err)
				}
			}
			dir := PodVolumeDir(root, pv.Pod, volumemanager.PluginEmptyDir, "cache")
			if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o777 {
				t.Fatalf("emptyDir %s: %v %v", dir, fi, err)
			}
			if got, _ := h.Path(pv); got != dir {
				t.Errorf("Path %s, want %s", got, dir)
			}
			for range 2 {
				if err := h.Unpublish(context.Background(), pv); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := os.Stat(PodDir(root, pv.Pod)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("pod dir after teardown: %v", err)
			}
			if !slices.Equal(m.calls, tt.wantCalls) {
				t.Errorf("mount calls %q, want %q", m.calls, tt.wantCalls)
			}
		})
	}
}

// TestEmptyDirTeardownKeepsOtherVolumes checks that removing one emptyDir
// leaves the pod's other volume directories.
func TestEmptyDirTeardownKeepsOtherVolumes(t *testing.T) {
	root := t.TempDir()
	h := New(root, newFakeMounter())
	a, b := emptyDir("1", "a", &v1.EmptyDirVolumeSource{}), emptyDir("1", "b", &v1.EmptyDirVolumeSource{})
	for _, pv := range []volumemanager.PodVolume{a, b} {
		if err := h.Publish(context.Background(), pv); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Unpublish(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(PodVolumeDir(root, b.Pod, b.Volume.Plugin, "b")); err != nil {
		t.Fatalf("the other emptyDir: %v", err)
	}
}

func TestTmpfsFailureIsReported(t *testing.T) {
	m := newFakeMounter()
	m.fail = errors.New("operation not permitted")
	err := New(t.TempDir(), m).Publish(context.Background(), emptyDir("1", "c", &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}))
	if err == nil || !strings.Contains(err.Error(), "mounting tmpfs on emptyDir") {
		t.Fatalf("err %v", err)
	}
}

func TestNotHostVolume(t *testing.T) {
	h := New(t.TempDir(), newFakeMounter())
	pv := volumemanager.PodVolume{Pod: "u", Name: "x", Volume: volumemanager.Volume{Plugin: volumemanager.PluginCSI}}
	for _, err := range []error{h.Publish(context.Background(), pv), h.Unpublish(context.Background(), pv)} {
		if !errors.Is(err, ErrNotHostVolume) {
			t.Errorf("err %v, want ErrNotHostVolume", err)
		}
	}
}

// TestHostPathTypes checks each hostPath type against each kind of file,
// and the creation of DirectoryOrCreate and FileOrCreate.
func TestHostPathTypes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		typ     v1.HostPathType
		path    string
		wantErr string // substring; empty for success
	}{
		{v1.HostPathUnset, missing, ""},
		{v1.HostPathDirectory, dir, ""},
		{v1.HostPathDirectory, file, "hostPath.type: Directory: " + file + " is not a directory"},
		{v1.HostPathDirectory, missing, "does not exist"},
		{v1.HostPathDirectoryOrCreate, file, "is not a directory"},
		{v1.HostPathDirectoryOrCreate, filepath.Join(dir, "new", "sub"), ""},
		{v1.HostPathFile, file, ""},
		{v1.HostPathFile, dir, "hostPath.type: File: " + dir + " is not a file"},
		{v1.HostPathFile, sock, "is not a file"},
		{v1.HostPathFileOrCreate, filepath.Join(dir, "newfile"), ""},
		{v1.HostPathFileOrCreate, dir, "is not a file"},
		{v1.HostPathSocket, sock, ""},
		{v1.HostPathSocket, file, "is not a socket"},
		{v1.HostPathCharDev, "/dev/null", ""},
		{v1.HostPathCharDev, file, "is not a character device"},
		{v1.HostPathBlockDev, "/dev/null", "is not a block device"},
		{v1.HostPathBlockDev, missing, "does not exist"},
		{"Pipe", dir, `hostPath.type: unsupported "Pipe"`},
	}
	h := New(t.TempDir(), newFakeMounter())
	for _, tt := range tests {
		t.Run(string(tt.typ)+" "+filepath.Base(tt.path), func(t *testing.T) {
			typ := tt.typ
			pv := volumemanager.PodVolume{Pod: "u", Name: "h", Volume: volumemanager.Volume{
				Plugin: volumemanager.PluginHostPath, HostPath: &v1.HostPathVolumeSource{Path: tt.path, Type: &typ},
			}}
			err := h.Publish(context.Background(), pv)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if typ == v1.HostPathDirectoryOrCreate || typ == v1.HostPathFileOrCreate {
					if _, err := os.Stat(tt.path); err != nil {
						t.Errorf("not created: %v", err)
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, volumemanager.ErrInvalidVolume) {
				t.Fatalf("err %v, want one containing %q and wrapping ErrInvalidVolume", err, tt.wantErr)
			}
		})
	}
}
