package main

import (
	"context"
	"fmt"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// ExecResult is the outcome of a command run in a container.
type ExecResult struct {
	Stdout, Stderr []byte
	ExitCode       int32
}

// ExecSync runs a command in a running container. Nothing really runs
// here: the containers of this runtime know two commands, "true" (exit 0)
// and "false" (exit 1); any other is not found (exit 127), as a shell
// would say.
func (m *memory) ExecSync(_ context.Context, id string, cmd []string) (ExecResult, error) {
	switch {
	case id == "":
		return ExecResult{}, fmt.Errorf("container id is empty: %w", errInvalid)
	case len(cmd) == 0:
		return ExecResult{}, fmt.Errorf("command is empty: %w", errInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.containers[id]
	switch {
	case !ok:
		return ExecResult{}, fmt.Errorf("container %q: %w", id, errNotFound)
	case c.State != ContainerRunning:
		return ExecResult{}, fmt.Errorf("container %q is not running: %w", id, errPrecondition)
	}
	switch cmd[0] {
	case "true":
		return ExecResult{}, nil
	case "false":
		return ExecResult{ExitCode: 1}, nil
	}
	return ExecResult{Stderr: []byte(cmd[0] + ": not found\n"), ExitCode: 127}, nil
}

func (s *server) ExecSync(ctx context.Context, req *runtimev1.ExecSyncRequest) (*runtimev1.ExecSyncResponse, error) {
	r, err := s.m.ExecSync(ctx, req.GetContainerId(), req.GetCmd())
	return reply(&runtimev1.ExecSyncResponse{Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode}, err)
}
