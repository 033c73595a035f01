package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/podhost/podhost/internal/testutil"
)

// TestBinary builds the command, runs it as a CO would (a config file,
// SIGTERM to stop), drives one volume through it with an injected fault,
// and runs csi-sanity against it.
func TestBinary(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "csi-loopdriver")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	endpoint, stateDir := filepath.Join(dir, "csi.sock"), filepath.Join(dir, "state")
	td := &testDriver{dir: dir, endpoint: endpoint, callLog: filepath.Join(dir, "calls.jsonl"), stateDir: stateDir}
	faulty := volumeID("faulty")
	cfgPath := filepath.Join(dir, "config.yaml")
	writeFile(t, cfgPath, fmt.Sprintf(`endpoint: unix://%s
stateDir: %s
nodeID: node-1
callLog: %s
defaultVolumeSize: 64Mi
faults:
- {rpc: NodeStageVolume, volume: %s, action: fail, code: RESOURCE_EXHAUSTED, times: 1}
`, endpoint, stateDir, td.callLog, faulty))
	t.Cleanup(func() { cleanupHost(t, dir, stateDir) })

	var logs testutil.SyncBuffer
	cmd := exec.Command(bin, "-config", cfgPath)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("driver output:\n%s", logs.String())
		}
	})
	waitFor(t, "the driver's socket", func() bool { _, err := os.Stat(endpoint); return err == nil }, logs.String)

	c := dial(t, endpoint)
	id := c.createVolume(t, "faulty")
	if id != faulty {
		t.Fatalf("volume ID %s, want %s", id, faulty)
	}
	staging, target := filepath.Join(dir, "staging"), filepath.Join(dir, "target")
	if err := os.Mkdir(staging, 0o750); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	wantCode(t, "first NodeStageVolume", c.stage(ctx, id, staging, rwo), codes.ResourceExhausted)
	wantCode(t, "second NodeStageVolume", c.stage(ctx, id, staging, rwo), codes.OK)
	wantCode(t, "NodePublishVolume", c.publish(ctx, id, staging, target, rwo, false), codes.OK)
	writeFile(t, filepath.Join(target, "data"), "kept")
	wantCode(t, "NodeUnpublishVolume", c.unpublish(ctx, id, target), codes.OK)
	wantCode(t, "NodeUnstageVolume", c.unstage(ctx, id, staging), codes.OK)
	wantCode(t, "NodeUnstageVolume again", c.unstage(ctx, id, staging), codes.OK)

	var stages []string
	for _, r := range td.calls(t) {
		if r.RPC == "NodeStageVolume" {
			stages = append(stages, r.Code+"/"+r.Fault)
		}
	}
	if fmt.Sprint(stages) != "[ResourceExhausted/fail OK/]" {
		t.Errorf("call log NodeStageVolume records %v, want [ResourceExhausted/fail OK/]", stages)
	}

	runSanityChild(t, envSanityEndpoint+"="+endpoint)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("driver exited with %v after SIGTERM", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("driver did not exit within 30s of SIGTERM")
	}
	if _, err := os.Stat(endpoint); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket after exit: %v, want it removed", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing the test after 30s with
// what explain says.
func waitFor(t *testing.T, what string, cond func() bool, explain func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %s", what, explain())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
