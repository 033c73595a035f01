package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podhost/podhost/test/crisetup"
)

// runSleeper starts a host-network pod with a busybox container that runs
// until killed, and returns the sandbox's ID and pause PID.
func runSleeper(ctx context.Context, t *testing.T, c *crisetup.Containerd, name string) (string, int) {
	t.Helper()
	id, pid, err := c.RunSleeper(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return id, pid
}

// alive reports whether pid runs. A zombie counts as gone: orphans of a
// killed shim are re-parented to PID 1, which on these VMs reaps them late.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// TestCRISetupStopRemovesSandboxes checks that Stop removes a sandbox a test
// left running, so that its shim exits without being killed.
func TestCRISetupStopRemovesSandboxes(t *testing.T) {
	c := crisetup.StartForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, pause := runSleeper(ctx, t, c, "left-running")
	if shims, err := c.Shims(); err != nil || len(shims) == 0 {
		t.Fatalf("Shims = %v, %v; want a running shim", shims, err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if shims, err := c.Shims(); err != nil || len(shims) != 0 {
		t.Errorf("after Stop: shims %v, %v", shims, err)
	}
	if alive(pause) {
		t.Errorf("pause process %d survived Stop", pause)
	}
}

// TestCRISetupStopAfterContainerdCrash checks that Stop kills the shims and
// containers of a containerd that died with sandboxes running, and says so.
func TestCRISetupStopAfterContainerdCrash(t *testing.T) {
	c := crisetup.StartForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	sandboxID, pause := runSleeper(ctx, t, c, "orphaned")
	if err := syscall.Kill(c.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := c.Stop(ctx)
	if err == nil || !strings.Contains(err.Error(), "killed leftover shims") {
		t.Errorf("Stop after a crash: err = %v, want it to report killed shims", err)
	}
	if shims, err := c.Shims(); err != nil || len(shims) != 0 {
		t.Errorf("after Stop: shims %v, %v", shims, err)
	}
	if alive(pause) {
		t.Errorf("pause process %d survived Stop", pause)
	}
	left, _ := filepath.Glob("/sys/fs/cgroup/*/k8s.io/" + sandboxID)
	if len(left) > 0 {
		t.Errorf("sandbox cgroups left after Stop: %v", left)
	}
}
