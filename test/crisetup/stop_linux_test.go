package crisetup

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Sandboxes whose shims die under Stop are stopped, not leaked: containerd
// 1.6 may answer with "ttrpc: closed" while it reaps a dead shim, and runs
// a cleanup shim for a while after. Stop succeeds and leaves nothing
// behind.
func TestStopTreatsDeadShimAsStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("a private containerd (root): not under -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := start(ctx, t.TempDir(), true, nil)
	if err != nil {
		t.Fatalf("start private containerd: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	var pids []int
	for _, name := range []string{"a", "b", "c"} {
		_, pid, err := c.RunSleeper(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	shims, err := c.Shims()
	if err != nil || len(shims) != len(pids) {
		t.Fatalf("Shims = %v, %v; want %d", shims, err, len(pids))
	}
	// Freeze the shims so that Stop's calls hang in them, then kill them
	// under those calls.
	signal := func(sig syscall.Signal) {
		for _, pid := range shims {
			if err := syscall.Kill(pid, sig); err != nil {
				t.Fatal(err)
			}
		}
	}
	signal(syscall.SIGSTOP)
	stopped := make(chan error, 1)
	go func() { stopped <- c.Stop(ctx) }()
	for !strings.Contains(readFile(c.Log), "StopPodSandbox for") {
		select {
		case err := <-stopped:
			t.Fatalf("Stop returned %v before the shims died", err)
		case <-ctx.Done():
			t.Fatal("Stop never asked containerd to stop a sandbox")
		case <-time.After(10 * time.Millisecond):
		}
	}
	signal(syscall.SIGKILL)
	if err := <-stopped; err != nil {
		t.Errorf("Stop with the shims killed under it: %v; want nil (nothing leaked)\n%s", err, c.LogTail(60))
	}
	if left, err := c.Shims(); err != nil || len(left) != 0 {
		t.Errorf("after Stop: shims %v, %v", left, err)
	}
	if !waitGone(pids, 10*time.Second) {
		t.Errorf("sandbox processes %v survived Stop", pids)
	}
}

func readFile(name string) string {
	b, _ := os.ReadFile(name)
	return string(b)
}
