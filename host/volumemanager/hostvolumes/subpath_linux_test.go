package hostvolumes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/host/volumemanager"
)

// subPathMounts are the mount points under root in this process's mount
// table.
func subPathMounts(t *testing.T, root string) []string {
	t.Helper()
	infos, err := mountinfo.GetMounts(mountinfo.PrefixFilter(root))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range infos {
		out = append(out, m.Mountpoint)
	}
	return out
}

// subPathVolume is a published emptyDir "cache" of pod uid-1 on the real
// mount table, with a ContainerMounts that mounts sub of it in container
// c at volumeMounts[0].
type subPathVolume struct {
	h    *Host
	root string
	dir  string // the emptyDir
	pod  *v1.Pod
}

func newSubPathVolume(t *testing.T) *subPathVolume {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test bind-mounts; run it as root")
	}
	root := t.TempDir()
	h := New(root, SystemMounter{})
	pv := emptyDir("1", "cache", &v1.EmptyDirVolumeSource{})
	if err := h.Publish(t.Context(), pv); err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: pv.Pod}, Spec: v1.PodSpec{Volumes: []v1.Volume{
		{Name: "cache", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}}}
	s := &subPathVolume{h: h, root: root, dir: PodVolumeDir(root, pv.Pod, volumemanager.PluginEmptyDir, "cache"), pod: pod}
	t.Cleanup(func() {
		subPathHook = nil
		if err := h.CleanSubPaths(pv.Pod, "cache"); err != nil {
			t.Error(err)
		}
		if m := subPathMounts(t, root); len(m) > 0 {
			t.Errorf("mounts left under the root: %v", m)
		}
	})
	return s
}

// mount is ContainerMounts of sub in container name: the host path given
// to the runtime, or the error.
func (s *subPathVolume) mount(container, sub string) (string, error) {
	c := &v1.Container{Name: container, VolumeMounts: []v1.VolumeMount{{Name: "cache", MountPath: "/m", SubPath: sub}}}
	ms, err := s.h.ContainerMounts(s.pod, c, nil, func(string) (volumemanager.PodVolume, bool) {
		return emptyDir("1", "cache", &v1.EmptyDirVolumeSource{}), true
	})
	if err != nil {
		return "", err
	}
	return ms[0].GetHostPath(), nil
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSubPathBindMount: a subPath is bind-mounted at its target under the
// pod's directory (a file as a file, a missing directory made first, a
// link inside the volume, as a configMap's keys are, followed), a
// container's restart keeps the mount, and a sub path that leaves the
// volume, through a link or "..", is refused with the kubelet's message
// and leaves no mount.
func TestSubPathBindMount(t *testing.T) {
	s := newSubPathVolume(t)
	write(t, filepath.Join(s.dir, "conf"), "conf in the volume")
	write(t, filepath.Join(s.dir, "..2026_12_04", "key"), "a key")
	for _, link := range [][2]string{{"..2026_12_04", "..data"}, {"..data/key", "key"}, {"/", "escape"}, {"../..", "up"}} {
		if err := os.Symlink(link[0], filepath.Join(s.dir, link[1])); err != nil {
			t.Fatal(err)
		}
	}

	file, err := s.mount("file", "conf")
	if err != nil {
		t.Fatal(err)
	}
	if want := SubPathTarget(s.root, s.pod.UID, "cache", "file", 0); file != want {
		t.Fatalf("host path %s, want the target %s", file, want)
	}
	if got := read(t, file); got != "conf in the volume" {
		t.Errorf("the file target reads %q", got)
	}

	dir, err := s.mount("dir", "made/deeper")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "through"), "written through the target")
	if got := read(t, filepath.Join(s.dir, "made", "deeper", "through")); got != "written through the target" {
		t.Errorf("the volume reads %q", got)
	}
	if fi, err := os.Stat(filepath.Join(s.dir, "made")); err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("made directory: %v %v, want the volume root's 0777", fi.Mode(), err)
	}

	key, err := s.mount("key", "key")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, key); got != "a key" {
		t.Errorf("the key target reads %q", got)
	}

	before := len(subPathMounts(t, s.root))
	if again, err := s.mount("dir", "made/deeper"); err != nil || again != dir {
		t.Fatalf("the container's restart: %s %v", again, err)
	}
	if after := len(subPathMounts(t, s.root)); after != before {
		t.Errorf("%d mounts after a restart of the container, want %d (the target kept)", after, before)
	}

	for _, tc := range []struct{ sub, want string }{
		{"escape/etc", `failed to prepare subPath for volumeMount "cache" of container "bad": "escape/etc" leaves the volume`},
		{"escape", `"escape" leaves the volume`},
		{"escape/podhost-must-not-exist/x", "leaves the volume"},
		{"up", "leaves the volume"},
		{"../x", `"../x" must be a relative path without ".."`},
		{"a/../../x", "must be a relative path"},
		{"conf/under-a-file", "not a directory"},
	} {
		if _, err := s.mount("bad", tc.sub); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("subPath %q: %v, want %q", tc.sub, err, tc.want)
		} else if strings.Contains(err.Error(), s.root) {
			t.Errorf("subPath %q: %v names a path of the host", tc.sub, err)
		}
	}
	if _, err := os.Lstat(SubPathTarget(s.root, s.pod.UID, "cache", "bad", 0)); err == nil {
		t.Errorf("a refused subPath left its target")
	}
	if _, err := os.Stat("/podhost-must-not-exist"); err == nil {
		t.Errorf("a refused subPath made a directory outside the volume")
	}
}

// TestSubPathRace swaps a directory of the sub path for a link to a
// directory outside the volume in the two windows of the kubelet's CVEs:
// after the links were resolved, the open refuses the link; after the
// open, the bind mount shows the directory opened, not the link's target.
func TestSubPathRace(t *testing.T) {
	s := newSubPathVolume(t)
	outside := t.TempDir()
	write(t, filepath.Join(outside, "marker"), "outside the volume")
	write(t, filepath.Join(s.dir, "work", "marker"), "inside the volume")
	swap := func(want string) func(string) {
		return func(stage string) {
			if stage != want {
				return
			}
			work := filepath.Join(s.dir, "work")
			if err := os.Rename(work, work+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, work); err != nil {
				t.Fatal(err)
			}
		}
	}

	subPathHook = swap("resolved")
	if _, err := s.mount("resolved", "work"); err == nil || !strings.Contains(err.Error(), `unexpected symbolic link "work"`) {
		t.Errorf("a link swapped in before the open: %v, want it refused", err)
	}
	restore := func() {
		work := filepath.Join(s.dir, "work")
		if err := os.Remove(work); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(work+".old", work); err != nil {
			t.Fatal(err)
		}
	}
	restore()

	subPathHook = swap("opened")
	target, err := s.mount("opened", "work")
	if err != nil {
		t.Fatal(err)
	}
	subPathHook = nil
	if got := read(t, filepath.Join(target, "marker")); got != "inside the volume" {
		t.Errorf("the target shows %q, want the directory opened (inside the volume)", got)
	}
	var got, want os.FileInfo
	if got, err = os.Lstat(target); err != nil {
		t.Fatal(err)
	}
	if want, err = os.Lstat(filepath.Join(s.dir, "work.old")); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(got, want) {
		t.Errorf("the target is not the directory opened")
	}
	if _, err := os.Stat(filepath.Join(outside, "marker")); err != nil {
		t.Errorf("outside the volume: %v", err)
	}
}

// TestCleanSubPathsAfterRestart: the cleanup of a host that did not set up
// the targets (a restart) finds them on disk and in the mount table,
// stacked mounts too, unmounts and removes them and the directories
// above, and leaves the volume's content.
func TestCleanSubPathsAfterRestart(t *testing.T) {
	s := newSubPathVolume(t)
	write(t, filepath.Join(s.dir, "conf"), "conf")
	for _, c := range []string{"a", "b"} {
		if _, err := s.mount(c, "conf"); err != nil {
			t.Fatal(err)
		}
		// The container's next attempt mounts a directory at the same
		// index: the file target is replaced.
		if _, err := s.mount(c, "dir"); err != nil {
			t.Fatal(err)
		}
	}
	// An interrupted set-up left a second mount on a target.
	target := SubPathTarget(s.root, s.pod.UID, "cache", "a", 0)
	if err := unix.Mount(filepath.Join(s.dir, "dir"), target, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	if n := len(subPathMounts(t, s.root)); n != 3 {
		t.Fatalf("%d mounts, want 3 (two targets, one stacked)", n)
	}

	restarted := New(s.root, SystemMounter{})
	if err := restarted.CleanSubPaths(s.pod.UID, "cache"); err != nil {
		t.Fatal(err)
	}
	if m := subPathMounts(t, s.root); len(m) > 0 {
		t.Errorf("mounts left: %v", m)
	}
	if _, err := os.Lstat(filepath.Join(PodDir(s.root, s.pod.UID), subPathsDir)); err == nil {
		t.Errorf("%s left", subPathsDir)
	}
	if got := read(t, filepath.Join(s.dir, "conf")); got != "conf" {
		t.Errorf("the volume's file reads %q", got)
	}
	if err := restarted.CleanSubPaths(s.pod.UID, "cache"); err != nil {
		t.Errorf("nothing left to clean: %v", err)
	}
}

// TestWithin: a path is within the volume root when it is the root or
// under it, the root "/" (a hostPath of /) included.
func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		base, p, rel string
		ok           bool
	}{
		{"/v", "/v", ".", true},
		{"/v", "/v/a/b", "a/b", true},
		{"/v", "/v/..data/key", "..data/key", true},
		{"/v", "/vx", "", false},
		{"/v", "/", "", false},
		{"/v", "/etc", "", false},
		{"/", "/etc", "etc", true},
		{"/", "/", ".", true},
	} {
		if rel, ok := within(tc.base, tc.p); rel != tc.rel || ok != tc.ok {
			t.Errorf("within(%q, %q) = %q, %v; want %q, %v", tc.base, tc.p, rel, ok, tc.rel, tc.ok)
		}
	}
}
