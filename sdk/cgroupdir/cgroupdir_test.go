package cgroupdir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Missing and empty dirs are removed; a dir rmdir refuses for another
// reason than EBUSY (not empty) fails at once, naming the error.
func TestRemove(t *testing.T) {
	dir := t.TempDir()
	empty, full := filepath.Join(dir, "empty"), filepath.Join(dir, "full")
	for _, d := range []string{empty, full} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(full, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := Remove(t.Context(), []string{empty, filepath.Join(dir, "missing"), full}, time.Hour)
	if !errors.Is(err, syscall.ENOTEMPTY) || !strings.Contains(err.Error(), "remove cgroup") {
		t.Errorf("Remove: %v; want the not-empty dir's error", err)
	}
	if time.Since(start) > time.Minute {
		t.Error("a dir that is not busy was retried")
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("empty dir after Remove: %v", err)
	}
	if err := Remove(context.Background(), []string{empty}, 0); err != nil {
		t.Errorf("Remove of a removed dir: %v", err)
	}
}

// A busy dir (here a mount point, which rmdir refuses with EBUSY as it
// refuses a cgroup with an unreaped process) is retried until it is free,
// until busyWait, or until ctx ends.
func TestRemoveRetriesBusy(t *testing.T) {
	if os.Geteuid() != 0 {
		// make test runs as root; a test that skips proves nothing.
		t.Fatal("needs root to mount a tmpfs")
	}
	busyDir := func(t *testing.T) string {
		d := filepath.Join(t.TempDir(), "busy")
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount("tmpfs", d, "tmpfs", 0, ""); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Unmount(d, syscall.MNT_DETACH) })
		return d
	}
	t.Run("freed while waiting", func(t *testing.T) {
		d := busyDir(t)
		go func() {
			time.Sleep(300 * time.Millisecond)
			_ = syscall.Unmount(d, 0)
		}()
		if err := Remove(t.Context(), []string{d}, time.Hour); err != nil {
			t.Errorf("Remove: %v", err)
		}
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("dir after Remove: %v", err)
		}
	})
	t.Run("busy past the wait", func(t *testing.T) {
		if err := Remove(t.Context(), []string{busyDir(t)}, 200*time.Millisecond); !errors.Is(err, syscall.EBUSY) {
			t.Errorf("Remove: %v; want EBUSY", err)
		}
	})
	t.Run("ctx ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := Remove(ctx, []string{busyDir(t)}, time.Hour); !errors.Is(err, context.Canceled) || !errors.Is(err, syscall.EBUSY) {
			t.Errorf("Remove: %v; want EBUSY and the cancellation", err)
		}
	})
}
