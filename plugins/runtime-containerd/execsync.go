package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// ExecSync maps the contract's call onto CRI's.
func (s *server) ExecSync(ctx context.Context, req *runtimev1.ExecSyncRequest) (*runtimev1.ExecSyncResponse, error) {
	out, err := s.rt.ExecSync(ctx, req.GetContainerId(), req.GetCmd(), req.GetTimeoutSeconds())
	if err != nil {
		return reply[runtimev1.ExecSyncResponse](nil, err)
	}
	return &runtimev1.ExecSyncResponse{Stdout: out.Stdout, Stderr: out.Stderr, ExitCode: out.ExitCode}, nil
}

// ExecSync runs cmd in a running container through CRI ExecSync, which
// kills the command after timeout seconds. The call itself may last the
// command's timeout plus the runtime timeout. containerd 1.6 reports a
// command that outlived its timeout, and a container that is not running,
// with UNKNOWN and a message: they become the contract's
// DEADLINE_EXCEEDED and FAILED_PRECONDITION.
func (r *criRuntime) ExecSync(ctx context.Context, id string, cmd []string, timeout int64) (*criapi.ExecSyncResponse, error) {
	switch {
	case id == "":
		return nil, fmt.Errorf("%w: container_id is required", errInvalid)
	case len(cmd) == 0:
		return nil, fmt.Errorf("%w: cmd is required", errInvalid)
	case timeout < 0:
		return nil, fmt.Errorf("%w: timeout_seconds must not be negative", errInvalid)
	}
	b, err := r.backend()
	if err != nil {
		return nil, err
	}
	ctx, cancel := b.runtimeCall(ctx, time.Duration(timeout)*time.Second)
	defer cancel()
	resp, err := b.rt.ExecSync(ctx, &criapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: timeout})
	if err == nil {
		return resp, nil
	}
	err = criError("exec in container "+id, err)
	if be, ok := err.(*backendError); ok && be.class == errBackend {
		switch msg := be.msg; {
		case strings.Contains(msg, "timeout") && strings.Contains(msg, "exceeded"):
			be.class = errDeadline
		case strings.Contains(msg, "not running"), strings.Contains(msg, "CONTAINER_EXITED"), strings.Contains(msg, "CONTAINER_CREATED"):
			be.class = errPrecondition
		}
	}
	return nil, err
}
