package mount

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/podhost/podhost/sdk"
)

// These tests mount for real: they need root, as the plugins that use the
// package do. Under -short (make unit) they skip (realMounts); without it
// they run, and fail when not root.

// realMounts skips t under -short.
func realMounts(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("mounts for real (root): not under -short")
	}
}

// mounts counts the mounts on path in this process's mount table.
func mounts(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			n++
		}
	}
	return n
}

// fixture is a source directory holding one file and a target path under
// a fresh directory; every mount on the target is taken off at the end.
func fixture(t *testing.T) (source, target string) {
	t.Helper()
	dir := t.TempDir()
	source, target = filepath.Join(dir, "source"), filepath.Join(dir, "target")
	if err := os.Mkdir(source, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(source, "data"), []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for mounts(t, target) > 0 {
			if err := syscall.Unmount(target, syscall.MNT_DETACH); err != nil {
				t.Errorf("cleaning up %s: %v", target, err)
				return
			}
		}
	})
	return source, target
}

func TestBind(t *testing.T) {
	realMounts(t)
	tests := []struct {
		name     string
		steps    func(source, target string) error
		mounted  int  // mounts on target afterwards
		exists   bool // target exists afterwards
		readonly bool
	}{
		{"bind once", func(s, tg string) error { return BindOnce(s, tg, false) }, 1, true, false},
		{"bind twice mounts once", func(s, tg string) error {
			return errors.Join(BindOnce(s, tg, false), BindOnce(s, tg, false))
		}, 1, true, false},
		{"read-only bind", func(s, tg string) error { return BindOnce(s, tg, true) }, 1, true, true},
		{"unmount and remove", func(s, tg string) error {
			return errors.Join(BindOnce(s, tg, false), UnmountAndRemove(tg))
		}, 0, false, false},
		{"unmount and remove twice", func(s, tg string) error {
			return errors.Join(BindOnce(s, tg, false), UnmountAndRemove(tg), UnmountAndRemove(tg))
		}, 0, false, false},
		{"unmount and remove of a missing path", func(_, tg string) error { return UnmountAndRemove(tg) }, 0, false, false},
		{"unmount keeps the directory", func(s, tg string) error {
			return errors.Join(BindOnce(s, tg, false), Unmount(tg), Unmount(tg))
		}, 0, true, false},
		{"unmount takes off stacked mounts", func(s, tg string) error {
			return errors.Join(BindOnce(s, tg, false), mounter.Mount(s, tg, "", []string{"bind"}), Unmount(tg))
		}, 0, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			source, target := fixture(t)
			if err := tt.steps(source, target); err != nil {
				t.Fatal(err)
			}
			if got := mounts(t, target); got != tt.mounted {
				t.Errorf("mounts on target: got %d; want %d", got, tt.mounted)
			}
			if got, err := IsMounted(target); err != nil || got != (tt.mounted > 0) {
				t.Errorf("IsMounted: got %v, %v; want %v", got, err, tt.mounted > 0)
			}
			if _, err := os.Stat(target); (err == nil) != tt.exists {
				t.Errorf("target exists: got %v; want %v", err == nil, tt.exists)
			}
			if b, err := os.ReadFile(filepath.Join(source, "data")); err != nil || string(b) != "kept" {
				t.Errorf("source data: got %q, %v; want it kept", b, err)
			}
			if tt.mounted == 0 {
				return
			}
			if b, err := os.ReadFile(filepath.Join(target, "data")); err != nil || string(b) != "kept" {
				t.Errorf("data through the target: got %q, %v; want %q", b, err, "kept")
			}
			err := os.WriteFile(filepath.Join(target, "new"), nil, 0o600)
			if tt.readonly && !errors.Is(err, syscall.EROFS) {
				t.Errorf("writing through a read-only target: got %v; want EROFS", err)
			}
			if !tt.readonly && err != nil {
				t.Errorf("writing through the target: %v", err)
			}
		})
	}
}

func TestUnmountAndRemoveKeepsAFullDirectory(t *testing.T) {
	realMounts(t)
	_, target := fixture(t)
	if err := os.MkdirAll(filepath.Join(target, "left"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := UnmountAndRemove(target); err == nil {
		t.Errorf("UnmountAndRemove of a directory with content: got nil; want an error")
	}
	if _, err := os.Stat(filepath.Join(target, "left")); err != nil {
		t.Errorf("content of the directory: %v; want it kept", err)
	}
}

func TestFormatAndMount(t *testing.T) {
	realMounts(t)
	dir := t.TempDir()
	img := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 32<<20); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		t.Fatalf("losetup: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("losetup", "--detach", dev).Run() })
	target := filepath.Join(dir, "target")
	t.Cleanup(func() { _ = syscall.Unmount(target, syscall.MNT_DETACH) })

	// Formats the empty device, then mounts it again as it is.
	for i, step := range []func() error{
		func() error { return FormatAndMount(dev, target, "ext4", nil) },
		func() error { return FormatAndMount(dev, target, "ext4", nil) },
		func() error { return os.WriteFile(filepath.Join(target, "data"), []byte("kept"), 0o600) },
		func() error { return UnmountAndRemove(target) },
		func() error { return FormatAndMount(dev, target, "ext4", nil) },
	} {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if got := mounts(t, target); got != 1 {
		t.Errorf("mounts on target: got %d; want 1", got)
	}
	if b, err := os.ReadFile(filepath.Join(target, "data")); err != nil || string(b) != "kept" {
		t.Errorf("data after mounting again: got %q, %v; want it kept, not reformatted", b, err)
	}
	if err := UnmountAndRemove(target); err != nil {
		t.Errorf("UnmountAndRemove: %v", err)
	}
	if got := mounts(t, target); got != 0 {
		t.Errorf("mounts on target after UnmountAndRemove: got %d; want 0", got)
	}
}

// TestBindOnceRefusesOtherArguments: a target mounted already is left as it
// is, and BindOnce answers sdk.ErrAlreadyExists when what is mounted there
// is not what it was asked: another source, or the other read-only mode.
func TestBindOnceRefusesOtherArguments(t *testing.T) {
	tests := []struct {
		name          string
		first, second bool // read-only of the first and the second bind
		other         bool // the second bind is of another source
		want          error
	}{
		{name: "same arguments", want: nil},
		{name: "read-only again", first: true, second: true, want: nil},
		{name: "read-only asked, read-write mounted", second: true, want: sdk.ErrAlreadyExists},
		{name: "read-write asked, read-only mounted", first: true, want: sdk.ErrAlreadyExists},
		{name: "another source", other: true, want: sdk.ErrAlreadyExists},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			source, target := fixture(t)
			if err := BindOnce(source, target, tt.first); err != nil {
				t.Fatal(err)
			}
			second := source
			if tt.other {
				second = t.TempDir()
			}
			if err := BindOnce(second, target, tt.second); !errors.Is(err, tt.want) {
				t.Errorf("second BindOnce: got %v; want %v", err, tt.want)
			}
			if got := mounts(t, target); got != 1 {
				t.Errorf("mounts on target: got %d; want 1, the first left as it is", got)
			}
		})
	}
}
