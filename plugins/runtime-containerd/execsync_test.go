package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/test/crisetup"
)

// TestExecSyncWithContainerd runs commands in a running container through
// the contract's ExecSync against a private containerd: output and exit
// code, a command cut off by its timeout, and the codes of calls that
// must fail.
func TestExecSyncWithContainerd(t *testing.T) {
	c := crisetup.StartForTest(t)
	rt := connect(t, fmt.Sprintf(`{"endpoint":%q,"timeouts":{"runtime":"60s","image":"60s"}}`, c.Endpoint()))
	logs := t.TempDir()
	sb, sbCfg := runSandbox(t, rt, "exec", func(sb *runtimev1.SandboxConfig) {
		sb.HostNetwork = true
		sb.LogDirectory = filepath.Join(logs, sb.GetMetadata().GetUid())
	})
	id := createAndStart(t, rt, sb, sbCfg, "sleeper", "sh", "-c", `trap "exit 0" TERM; while true; do sleep 0.1; done`)

	resp, err := rt.ExecSync(callCtx(t), &runtimev1.ExecSyncRequest{ContainerId: id,
		Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, TimeoutSeconds: 10})
	if err != nil {
		t.Fatalf("ExecSync: %v", err)
	}
	if string(resp.GetStdout()) != "out\n" || string(resp.GetStderr()) != "err\n" || resp.GetExitCode() != 3 {
		t.Fatalf("ExecSync: stdout %q stderr %q exit %d; want \"out\\n\" \"err\\n\" 3", resp.GetStdout(), resp.GetStderr(), resp.GetExitCode())
	}

	began := time.Now()
	_, err = rt.ExecSync(callCtx(t), &runtimev1.ExecSyncRequest{ContainerId: id, Cmd: []string{"sleep", "30"}, TimeoutSeconds: 1})
	if got := status.Code(err); got != codes.DeadlineExceeded {
		t.Fatalf("ExecSync past its timeout: got %v (%v); want DeadlineExceeded", got, err)
	}
	if took := time.Since(began); took > 15*time.Second {
		t.Fatalf("ExecSync with a 1 s timeout took %v", took)
	}

	if _, err := rt.StopContainer(callCtx(t), &runtimev1.StopContainerRequest{ContainerId: id, TimeoutSeconds: 10}); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	tests := []struct {
		name string
		id   string
		cmd  []string
		want codes.Code
	}{
		{"exited container", id, []string{"true"}, codes.FailedPrecondition},
		{"unknown container", "0123456789abcdef0123456789abcdef", []string{"true"}, codes.NotFound},
		{"no container id", "", []string{"true"}, codes.InvalidArgument},
		{"no command", id, nil, codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rt.ExecSync(callCtx(t), &runtimev1.ExecSyncRequest{ContainerId: tt.id, Cmd: tt.cmd})
			if got := status.Code(err); got != tt.want {
				t.Fatalf("ExecSync: got %v (%v); want %v", got, err, tt.want)
			}
		})
	}
}
