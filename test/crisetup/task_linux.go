package crisetup

import (
	"context"
	"fmt"

	containersapi "github.com/containerd/containerd/api/services/containers/v1"
	snapshotsapi "github.com/containerd/containerd/api/services/snapshots/v1"
	tasksapi "github.com/containerd/containerd/api/services/tasks/v1"
	"google.golang.org/grpc/metadata"
)

// CreateTask makes containerd create the task of the CRI container id
// through its own task service, behind CRI's back: the task is CREATED
// (runc's init waits to exec the command) while CRI still shows the
// container created. A CRI StartContainer of it then fails after
// containerd's task exists, as one does when its caller dies between the
// two, which is the interleaving the tests of a cut-short start need.
func (c *Containerd) CreateTask(ctx context.Context, id string) error {
	ctx = metadata.AppendToOutgoingContext(ctx, "containerd-namespace", Namespace)
	got, err := containersapi.NewContainersClient(c.conn).Get(ctx, &containersapi.GetContainerRequest{ID: id})
	if err != nil {
		return fmt.Errorf("container %s: %w", id, err)
	}
	ctr := got.GetContainer()
	mounts, err := snapshotsapi.NewSnapshotsClient(c.conn).Mounts(ctx, &snapshotsapi.MountsRequest{Snapshotter: ctr.GetSnapshotter(), Key: ctr.GetSnapshotKey()})
	if err != nil {
		return fmt.Errorf("rootfs of container %s: %w", id, err)
	}
	if _, err := tasksapi.NewTasksClient(c.conn).Create(ctx, &tasksapi.CreateTaskRequest{ContainerID: id, Rootfs: mounts.GetMounts()}); err != nil {
		return fmt.Errorf("task of container %s: %w", id, err)
	}
	return nil
}
