package hostvolumes

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMakeRShared: a directory on a private mount becomes a shared mount
// point of its own, and a second call leaves it as it is (one mount).
// Needs root, as mounting does.
func TestMakeRShared(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root (mount(2))")
	}
	// A private tmpfs, so that the test does not depend on how the
	// machine's / propagates.
	base := t.TempDir()
	if err := unix.Mount("tmpfs", base, "tmpfs", 0, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(base, unix.MNT_DETACH) })
	if err := unix.Mount("", base, "", unix.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if shared, err := onSharedMount(root); err != nil || shared {
		t.Fatalf("before: shared %v, %v; want a private mount", shared, err)
	}
	for range 2 {
		if err := MakeRShared(root); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = unix.Unmount(root, unix.MNT_DETACH) })
	if shared, err := onSharedMount(root); err != nil || !shared {
		t.Fatalf("after: shared %v, %v; want a shared mount", shared, err)
	}
	if shared, _ := onSharedMount(base); shared {
		t.Error("the mount above root became shared; only root should")
	}
	// root is mounted once: the second call found it shared.
	if err := unix.Unmount(root, 0); err != nil {
		t.Fatal(err)
	}
	if shared, _ := onSharedMount(root); shared {
		t.Error("root still on a shared mount after one unmount: it was mounted twice")
	}
}
