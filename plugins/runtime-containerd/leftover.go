package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	tasksapi "github.com/containerd/containerd/api/services/tasks/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// removeContainer removes a container through CRI. A start cut short after
// containerd created the container's task (its caller died between the
// two, or containerd's own call was cancelled there) leaves the container
// exited 128 (StartError) with the task still CREATED: CRI neither stops
// an exited container (its StopContainer returns at once) nor removes one
// with a task ("cannot delete running task"), so every removal would fail
// the same way. When CRI refuses the removal of an exited container,
// removeContainer deletes the leftover task through containerd's task
// service and asks CRI again. A running container is never touched behind
// CRI's back.
//
// A start whose caller gave up (its context was cancelled) goes on inside
// containerd until the shim answers, seconds under load; meanwhile CRI
// refuses to remove the container ("container is in starting state"), and
// a sandbox that holds it. removeContainer and removeSandbox wait for that
// start to end (awaitStart) instead of failing a removal that succeeds a
// moment later.
func (b *backend) removeContainer(ctx context.Context, id string) error {
	err := awaitStart(ctx, func() error {
		_, err := b.rt.RemoveContainer(ctx, &criapi.RemoveContainerRequest{ContainerId: id})
		return err
	})
	if status.Code(err) != codes.FailedPrecondition {
		return err
	}
	c, statusErr := b.containerStatus(ctx, id)
	if statusErr != nil || c.State != ContainerExited {
		return err
	}
	if derr := b.deleteTask(ctx, id); derr != nil {
		return fmt.Errorf("%w (deleting its leftover task: %w)", err, derr)
	}
	_, err = b.rt.RemoveContainer(ctx, &criapi.RemoveContainerRequest{ContainerId: id})
	return err
}

// removeSandbox removes a sandbox and its containers through CRI, waiting
// for a start in flight in it as removeContainer does.
func (b *backend) removeSandbox(ctx context.Context, id string) error {
	return awaitStart(ctx, func() error {
		_, err := b.rt.RemovePodSandbox(ctx, &criapi.RemovePodSandboxRequest{PodSandboxId: id})
		return err
	})
}

// Back-off of awaitStart.
const (
	startWaitInitial = 10 * time.Millisecond
	startWaitMax     = 500 * time.Millisecond
)

// awaitStart calls remove until it does not fail because containerd still
// starts a container it would remove, as long as ctx allows; it returns the
// last error.
func awaitStart(ctx context.Context, remove func() error) error {
	for delay := startWaitInitial; ; delay = min(2*delay, startWaitMax) {
		err := remove()
		if err == nil || !strings.Contains(status.Convert(err).Message(), "is in starting state") {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (waiting for its start to end: %w)", err, ctx.Err())
		case <-time.After(delay):
		}
	}
}

// deleteTask deletes the containerd task of container id, killing its
// process if it has one (runc deletes a created container by killing
// it); a task already gone is no error.
func (b *backend) deleteTask(ctx context.Context, id string) error {
	ctx = metadata.AppendToOutgoingContext(ctx, "containerd-namespace", b.cfg.Namespace)
	_, err := tasksapi.NewTasksClient(b.main).Delete(ctx, &tasksapi.DeleteTaskRequest{ContainerID: id})
	if status.Code(err) == codes.NotFound {
		return nil
	}
	return err
}
