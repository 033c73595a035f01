package runtimemanager

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func TestExecSync(t *testing.T) {
	tests := []struct {
		name     string
		exec     func(ctx context.Context, id string, cmd []string) (*runtimev1.ExecSyncResponse, error)
		cmd      []string
		wantExit int32
		wantOut  string
		wantErr  error
	}{
		{name: "exit code and output", cmd: []string{"probe"}, wantExit: 2, wantOut: "bad",
			exec: func(context.Context, string, []string) (*runtimev1.ExecSyncResponse, error) {
				return &runtimev1.ExecSyncResponse{Stdout: []byte("bad"), ExitCode: 2}, nil
			}},
		{name: "timed out", cmd: []string{"probe"}, wantErr: ErrExecTimeout,
			exec: func(context.Context, string, []string) (*runtimev1.ExecSyncResponse, error) {
				return nil, status.Error(codes.DeadlineExceeded, "timeout 1s exceeded")
			}},
		{name: "unknown command in the built-in fake", cmd: []string{"nope"}, wantExit: 127},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			pod := newPod("p", "app")
			e.mustSync(pod)
			id := e.container(pod, "app").ID
			e.fake.ExecSyncFunc = tt.exec
			got, err := e.m.ExecSync(context.Background(), id, tt.cmd, 1500*time.Millisecond)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ExecSync: err %v; want %v", err, tt.wantErr)
			}
			if err == nil && (got.ExitCode != tt.wantExit || string(got.Stdout) != tt.wantOut) {
				t.Fatalf("ExecSync: %+v; want exit %d stdout %q", got, tt.wantExit, tt.wantOut)
			}
			calls := e.fake.Calls()
			last := calls[len(calls)-1].Req.(*runtimev1.ExecSyncRequest)
			if last.GetTimeoutSeconds() != 2 {
				t.Fatalf("timeout sent: %d s; want 1.5 s rounded up to 2", last.GetTimeoutSeconds())
			}
		})
	}
}

func TestKillContainer(t *testing.T) {
	e := newEnv(t)
	pod := newPod("p", "app", "side")
	e.mustSync(pod)
	id := e.container(pod, "app").ID
	if err := e.m.KillContainer(context.Background(), pod, "app", id, 7, "Container app failed liveness probe, will be restarted"); err != nil {
		t.Fatal(err)
	}
	if got := e.container(pod, "app").State; got != lifecycle.ContainerExited {
		t.Fatalf("app after KillContainer: %s; want exited", got)
	}
	if got := e.container(pod, "side").State; got != lifecycle.ContainerRunning {
		t.Fatalf("side after killing app: %s; want running", got)
	}
	if err := e.m.KillContainer(context.Background(), pod, "app", "unknown-id", 7, "again"); err != nil {
		t.Fatalf("killing an unknown container: %v", err)
	}
}
