package runtimemanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// ErrReopenUnsupported: the runtime plugin does not serve
// ReopenContainerLog (one built before the call existed), so its logs
// cannot be rotated; the files are left as they are.
var ErrReopenUnsupported = errors.New("runtime plugin cannot reopen container logs")

// LogRotation is the policy of container log rotation: the kubelet's
// containerLogMaxSize, containerLogMaxFiles and containerLogMonitorInterval.
type LogRotation struct {
	// MaxBytes is the size above which a running container's log file is
	// rotated.
	MaxBytes int64
	// MaxFiles is the most files a container's log keeps, the one being
	// written included; at least 2.
	MaxFiles int
	// Interval is the time between two passes over the running containers.
	Interval time.Duration
}

func (r LogRotation) validate() error {
	switch {
	case r.MaxBytes <= 0:
		return fmt.Errorf("log rotation: max size %d is not positive", r.MaxBytes)
	case r.MaxFiles < 2:
		return fmt.Errorf("log rotation: max files %d is less than 2", r.MaxFiles)
	case r.Interval <= 0:
		return fmt.Errorf("log rotation: interval %s is not positive", r.Interval)
	}
	return nil
}

// RotateLogs rotates the log files of the running containers every
// r.Interval until ctx is done; see RotateContainerLogs. An invalid policy
// is logged and rotates nothing.
func (m *Manager) RotateLogs(ctx context.Context, r LogRotation) {
	if err := r.validate(); err != nil {
		m.log.Error("container log rotation disabled", "err", err)
		return
	}
	unsupported := false // said once
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.clock.After(r.Interval):
		}
		err := m.RotateContainerLogs(ctx, r)
		switch {
		case err == nil || ctx.Err() != nil:
		case errors.Is(err, ErrReopenUnsupported):
			if !unsupported {
				m.log.Warn("container logs are not rotated", "err", err)
			}
			unsupported = true
		default:
			m.log.Warn("rotating container logs", "err", err)
		}
	}
}

// RotateContainerLogs makes one pass over the running containers podhost
// manages, as the kubelet's container log manager does: a log file bigger
// than r.MaxBytes is renamed to <file>.<timestamp> and the runtime reopens
// <file> (ReopenContainerLog); rotated files but the newest are gzipped, and
// the oldest are removed so that at most r.MaxFiles files remain. A
// container that stopped meanwhile keeps its file. It returns every
// container's error, joined.
func (m *Manager) RotateContainerLogs(ctx context.Context, r LogRotation) error {
	if err := r.validate(); err != nil {
		return err
	}
	resp, err := m.rt.ListContainers(ctx, &runtimev1.ListContainersRequest{Filter: &runtimev1.ContainerFilter{
		State:         runtimev1.ContainerState_CONTAINER_STATE_RUNNING,
		LabelSelector: map[string]string{LabelManagedBy: ManagedByValue},
	}})
	if err != nil {
		return callError("listing running containers", err)
	}
	var errs []error
	for _, c := range resp.GetContainers() {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := m.rotateContainerLog(ctx, r, c.GetId())
		if errors.Is(err, ErrReopenUnsupported) {
			return err // the same for every container
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("container %s: %w", c.GetId(), err))
		}
	}
	return errors.Join(errs...)
}

// rotateContainerLog rotates one container's log; the log path comes from
// its status, as List does not carry it.
func (m *Manager) rotateContainerLog(ctx context.Context, r LogRotation, id string) error {
	resp, err := m.rt.ContainerStatus(ctx, &runtimev1.ContainerStatusRequest{ContainerId: id})
	if err = callError("container status", err); errors.Is(err, ErrNotFound) {
		return nil // removed since the listing
	} else if err != nil {
		return err
	}
	c := resp.GetContainer()
	if c.GetLogPath() == "" || c.GetState() != runtimev1.ContainerState_CONTAINER_STATE_RUNNING {
		return nil
	}
	rot := logRotator{policy: r, now: m.clock.Now, reopen: func(ctx context.Context) error {
		_, err := m.rt.ReopenContainerLog(ctx, &runtimev1.ReopenContainerLogRequest{ContainerId: id})
		if status.Code(err) == codes.Unimplemented {
			return ErrReopenUnsupported
		}
		return callError("reopening the log", err)
	}}
	rotated, err := rot.rotate(ctx, c.GetLogPath())
	if rotated != "" {
		m.log.Debug("rotated container log", "container", id, "file", rotated)
	}
	return err
}
