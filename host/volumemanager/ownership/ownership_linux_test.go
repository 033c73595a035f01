package ownership

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test changes file groups; run it as root")
	}
}

// tree makes a volume under a temp dir, and a file outside it that a
// symbolic link in the volume points at, and returns both.
func tree(t *testing.T) (vol, outside string) {
	t.Helper()
	base := t.TempDir()
	vol, outside = filepath.Join(base, "vol"), filepath.Join(base, "outside")
	must(t, os.Mkdir(vol, 0o700))
	must(t, os.WriteFile(outside, nil, 0o600))
	must(t, os.Mkdir(filepath.Join(vol, "sub"), 0o700))
	must(t, os.Mkdir(filepath.Join(base, "outdir"), 0o700))
	for name, mode := range map[string]fs.FileMode{"a": 0o644, "sub/b": 0o600, "sub/x": 0o700} {
		p := filepath.Join(vol, name)
		must(t, os.WriteFile(p, nil, mode))
		must(t, os.Chmod(p, mode))
	}
	must(t, os.Symlink(outside, filepath.Join(vol, "out")))
	must(t, os.Symlink("../outdir", filepath.Join(vol, "outdir")))
	must(t, os.Symlink("sub", filepath.Join(vol, "loop")))
	must(t, os.Chmod(vol, 0o700))
	return vol, outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustStat(t *testing.T, p string) fs.FileInfo {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

func gidOf(t *testing.T, p string) int64 {
	return int64(mustStat(t, p).Sys().(*syscall.Stat_t).Gid)
}

func TestChangeWalksTheVolume(t *testing.T) {
	needRoot(t)
	for _, ro := range []bool{false, true} {
		vol, outside := tree(t)
		if err := Change(vol, Options{FSGroup: 1234, ReadOnly: ro}); err != nil {
			t.Fatalf("Change: %v", err)
		}
		want := map[string]fs.FileMode{
			".":      fs.ModeDir | fs.ModeSetgid | 0o770,
			"a":      0o664,
			"sub":    fs.ModeDir | fs.ModeSetgid | 0o770,
			"sub/b":  0o660,
			"sub/x":  0o760,
			"out":    fs.ModeSymlink | 0o777,
			"outdir": fs.ModeSymlink | 0o777,
			"loop":   fs.ModeSymlink | 0o777,
		}
		if ro {
			want["."], want["sub"] = fs.ModeDir|fs.ModeSetgid|0o750, fs.ModeDir|fs.ModeSetgid|0o750
			want["a"], want["sub/b"], want["sub/x"] = 0o644, 0o640, 0o740
		}
		for name, mode := range want {
			p := filepath.Join(vol, name)
			if got := mustStat(t, p).Mode(); got != mode {
				t.Errorf("readOnly %v: mode of %s = %v, want %v", ro, name, got, mode)
			}
			if got := gidOf(t, p); got != 1234 {
				t.Errorf("readOnly %v: group of %s = %d, want 1234", ro, name, got)
			}
		}
		// Links are not followed out of the volume.
		outdir := filepath.Join(filepath.Dir(vol), "outdir")
		for p, mode := range map[string]fs.FileMode{outside: 0o600, outdir: fs.ModeDir | 0o700} {
			if got := mustStat(t, p).Mode(); got != mode {
				t.Errorf("readOnly %v: mode of %s outside the volume = %v, want %v (followed a link)", ro, p, got, mode)
			}
			if got := gidOf(t, p); got != 0 {
				t.Errorf("readOnly %v: group of %s outside the volume = %d, want 0 (followed a link)", ro, p, got)
			}
		}
	}
}

func TestChangeKeepsTheStickyBit(t *testing.T) {
	needRoot(t)
	vol := t.TempDir()
	must(t, os.Chmod(vol, 0o777|fs.ModeSticky))
	must(t, Change(vol, Options{FSGroup: 1234}))
	if got, want := mustStat(t, vol).Mode(), fs.ModeDir|fs.ModeSetgid|fs.ModeSticky|0o777; got != want {
		t.Errorf("mode = %v, want %v", got, want)
	}
}

func TestChangeOnRootMismatch(t *testing.T) {
	needRoot(t)
	vol, _ := tree(t)
	o := Options{FSGroup: 1234, Policy: v1.FSGroupChangeOnRootMismatch}
	// The root matches: nothing under it is changed.
	must(t, os.Chown(vol, -1, 1234))
	must(t, os.Chmod(vol, fs.ModeSetgid|0o770))
	must(t, Change(vol, o))
	if got := gidOf(t, filepath.Join(vol, "a")); got != 0 {
		t.Errorf("root matched, yet a's group = %d, want 0 (walked)", got)
	}
	// The root's mode does not match: everything is walked.
	must(t, os.Chmod(vol, 0o770))
	must(t, Change(vol, o))
	if got := gidOf(t, filepath.Join(vol, "a")); got != 1234 {
		t.Errorf("root mismatched, yet a's group = %d, want 1234 (not walked)", got)
	}
	if got, want := mustStat(t, vol).Mode(), fs.ModeDir|fs.ModeSetgid|0o770; got != want {
		t.Errorf("root mode = %v, want %v", got, want)
	}
}

func TestChangeDoesNotFollowARootLink(t *testing.T) {
	needRoot(t)
	vol, _ := tree(t)
	link := filepath.Join(t.TempDir(), "link")
	must(t, os.Symlink(vol, link))
	must(t, Change(link, Options{FSGroup: 1234}))
	if got := gidOf(t, filepath.Join(vol, "a")); got != 0 {
		t.Errorf("group of a behind a root link = %d, want 0", got)
	}
	if got := gidOf(t, link); got != 1234 {
		t.Errorf("group of the link = %d, want 1234", got)
	}
}

func TestChangeMissingVolume(t *testing.T) {
	if err := Change(filepath.Join(t.TempDir(), "none"), Options{FSGroup: 1}); err == nil {
		t.Error("Change of a missing directory succeeded")
	}
}
