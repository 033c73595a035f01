package crisetup

import (
	"context"
	"testing"
	"time"
)

// StartForTest starts a private containerd in a fresh temporary directory
// and stops it when the test ends: all sandboxes are removed, containerd is
// stopped, and the test fails if a shim or a mount had to be forced away. If
// the test binary dies without cleanup, containerd dies with it. A missing
// containerd (or, with WithPodNetwork, a missing CNI plugin) fails the
// test; it never skips, except under -short (make unit), where it skips
// every test that asks for one.
func StartForTest(t testing.TB, opts ...Option) *Containerd {
	t.Helper()
	if testing.Short() {
		t.Skip("a private containerd (root): not under -short")
	}
	dir := t.TempDir()
	c, err := start(t.Context(), dir, true, opts)
	if err != nil {
		t.Fatalf("start private containerd: %v", err)
	}
	t.Cleanup(func() {
		// t.Context is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if t.Failed() {
			t.Log(c.LogTail(40))
		}
		if err := c.Stop(ctx); err != nil {
			t.Errorf("stop private containerd: %v", err)
		}
	})
	return c
}
