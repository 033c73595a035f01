package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/test/crisetup"
)

// TestReopenContainerLogWithContainerd rotates a running container's log
// the way the host does (rename, then ReopenContainerLog) against a private
// containerd, and checks the codes of the calls that must fail.
func TestReopenContainerLogWithContainerd(t *testing.T) {
	c := crisetup.StartForTest(t)
	rt := connect(t, fmt.Sprintf(`{"endpoint":%q,"timeouts":{"runtime":"60s","image":"60s"}}`, c.Endpoint()))
	logs := t.TempDir()
	sb, sbCfg := runSandbox(t, rt, "reopen", func(sb *runtimev1.SandboxConfig) {
		sb.HostNetwork = true
		sb.LogDirectory = filepath.Join(logs, sb.GetMetadata().GetUid())
	})
	id := createAndStart(t, rt, sb, sbCfg, "ticker", "sh", "-c", `trap "exit 0" TERM; while true; do echo tick; sleep 0.05; done`)
	path := filepath.Join(sbCfg.GetLogDirectory(), "ticker.log")
	waitContains(t, path, " stdout F tick\n")

	rotated := path + ".1"
	if err := os.Rename(path, rotated); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.ReopenContainerLog(callCtx(t), &runtimev1.ReopenContainerLogRequest{ContainerId: id}); err != nil {
		t.Fatalf("ReopenContainerLog of a running container: %v", err)
	}
	waitContains(t, path, " stdout F tick\n")

	if _, err := rt.StopContainer(callCtx(t), &runtimev1.StopContainerRequest{ContainerId: id, TimeoutSeconds: 10}); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	tests := []struct {
		name string
		id   string
		want codes.Code
	}{
		{"exited container", id, codes.FailedPrecondition},
		{"unknown container", "0123456789abcdef0123456789abcdef", codes.NotFound},
		{"no container id", "", codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rt.ReopenContainerLog(callCtx(t), &runtimev1.ReopenContainerLogRequest{ContainerId: tt.id})
			if got := status.Code(err); got != tt.want {
				t.Fatalf("ReopenContainerLog: got %v (%v); want %v", got, err, tt.want)
			}
		})
	}
}

// waitContains waits until the file at path contains s.
func waitContains(t *testing.T, path, s string) {
	t.Helper()
	deadline := time.Now().Add(callTimeout)
	for {
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: got %q (%v) after %v; want it to contain %q", path, b, err, callTimeout, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
