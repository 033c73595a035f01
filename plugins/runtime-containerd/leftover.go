package main

import (
	"context"
	"fmt"

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
func (b *backend) removeContainer(ctx context.Context, id string) error {
	_, err := b.rt.RemoveContainer(ctx, &criapi.RemoveContainerRequest{ContainerId: id})
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
