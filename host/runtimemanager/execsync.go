package runtimemanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// ErrExecTimeout is a command of ExecSync that outlived its timeout; the
// runtime killed it.
var ErrExecTimeout = errors.New("command timed out")

// ExecResult is what a command run in a container gave.
type ExecResult struct {
	Stdout, Stderr []byte
	ExitCode       int32
}

// ExecSync runs cmd in the running container id and waits for it, at most
// timeout (rounded up to whole seconds; 0 means no bound but ctx's). A
// non-zero exit code is a result. A command cut off by its timeout is
// ErrExecTimeout.
func (m *Manager) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (ExecResult, error) {
	secs := int64((timeout + time.Second - 1) / time.Second)
	resp, err := m.rt.ExecSync(ctx, &runtimev1.ExecSyncRequest{ContainerId: id, Cmd: cmd, TimeoutSeconds: secs})
	if err != nil {
		if status.Code(err) == codes.DeadlineExceeded || (errors.Is(err, context.DeadlineExceeded) && timeout > 0) {
			return ExecResult{}, fmt.Errorf("exec in container %s: %w after %v", id, ErrExecTimeout, timeout)
		}
		return ExecResult{}, callError("exec in container "+id, err)
	}
	return ExecResult{Stdout: resp.GetStdout(), Stderr: resp.GetStderr(), ExitCode: resp.GetExitCode()}, nil
}

// KillContainer stops one container of the pod within grace seconds, for
// a failed liveness or startup probe, its preStop hook first; what
// follows is the restart policy's. An unknown or exited container is already stopped. message is
// logged; the prober records the event.
func (m *Manager) KillContainer(ctx context.Context, pod *v1.Pod, name, id string, grace int64, message string) error {
	m.log.Info("killing container", "pod", pod.Namespace+"/"+pod.Name, "uid", string(pod.UID), "container", name, "grace", grace, "reason", message)
	st, err := m.podState(ctx, pod.UID)
	if err != nil {
		return fmt.Errorf("killing container %s of %s/%s: %w", name, pod.Namespace, pod.Name, err)
	}
	if err := m.stopWithPreStop(ctx, pod, name, id, podIPOf(st), max(grace, 0)); err != nil {
		return fmt.Errorf("killing container %s of %s/%s: %w", name, pod.Namespace, pod.Name, err)
	}
	return nil
}
