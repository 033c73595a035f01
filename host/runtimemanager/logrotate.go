package runtimemanager

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"

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
//
// The host chose every log path itself (PodLogDir, ContainerLogPath), so a
// pass first reads the log directory and asks the runtime nothing unless a
// file needs rotating (logScan).
func (m *Manager) RotateContainerLogs(ctx context.Context, r LogRotation) error {
	if err := r.validate(); err != nil {
		return err
	}
	m.logScan.mu.Lock()
	defer m.logScan.mu.Unlock()
	candidates, err := m.logScan.candidates(m.logRoot, r.MaxBytes)
	if err != nil || len(candidates) == 0 {
		return err
	}
	resp, err := m.rt.ListContainers(ctx, &runtimev1.ListContainersRequest{Filter: &runtimev1.ContainerFilter{
		State:         runtimev1.ContainerState_CONTAINER_STATE_RUNNING,
		LabelSelector: map[string]string{LabelManagedBy: ManagedByValue},
	}})
	if err != nil {
		return callError("listing running containers", err)
	}
	running := map[string]string{} // log path → container ID
	for _, c := range resp.GetContainers() {
		if path, ok := m.hostLogPath(c); ok {
			running[path] = c.GetId()
		}
	}
	var errs []error
	for path, key := range candidates {
		if err := ctx.Err(); err != nil {
			return err
		}
		id, ok := running[path]
		if !ok {
			m.logScan.idle[path] = key // not written by a running container
			continue
		}
		err := m.rotateContainerLog(ctx, r, id)
		if errors.Is(err, ErrReopenUnsupported) {
			return err // the same for every container
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("container %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// hostLogPath is the log path the host gave the container when it created
// it, from its labels.
func (m *Manager) hostLogPath(c *runtimev1.Container) (string, bool) {
	l := c.GetLabels()
	attempt, ok := parseUint32(l[LabelContainerAttempt])
	if !ok || l[LabelPodNamespace] == "" || l[LabelPodName] == "" || l[LabelPodUID] == "" || l[LabelContainerName] == "" {
		return "", false
	}
	dir := PodLogDir(m.logRoot, l[LabelPodNamespace], l[LabelPodName], types.UID(l[LabelPodUID]))
	return filepath.Join(dir, ContainerLogPath(l[LabelContainerName], attempt)), true
}

// rotateContainerLog rotates one container's log; the log path comes from
// its status, so the file renamed is the one the runtime writes.
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
