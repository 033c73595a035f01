package main

import (
	"context"
	"fmt"
	"time"

	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CreateContainer creates a container in the sandbox sandboxID. pod is the
// sandbox's spec as given to RunSandbox; nil leaves the pod labels out.
func (r *criRuntime) CreateContainer(ctx context.Context, sandboxID string, spec ContainerSpec, pod *SandboxSpec) (string, error) {
	switch {
	case sandboxID == "":
		return "", fmt.Errorf("%w: sandbox_id is required", errInvalid)
	case spec.Name == "":
		return "", fmt.Errorf("%w: container metadata needs a name", errInvalid)
	case spec.Image == "":
		return "", fmt.Errorf("%w: container image is required", errInvalid)
	}
	if err := checkLabels(spec.Labels); err != nil {
		return "", err
	}
	if pod != nil {
		// Its pod cgroup is the containers' cgroup parent too.
		if _, err := checkPodCgroup(*pod); err != nil {
			return "", err
		}
	}
	b, err := r.backend()
	if err != nil {
		return "", err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	if pod, err = b.withPodCgroup(ctx, sandboxID, pod); err != nil {
		return "", err
	}
	var sbCfg *criapi.PodSandboxConfig
	if pod != nil {
		sbCfg = sandboxConfigToCRI(*pod)
	}
	defer r.watch.begin("")()
	resp, err := b.rt.CreateContainer(ctx, &criapi.CreateContainerRequest{
		PodSandboxId:  sandboxID,
		Config:        containerConfigToCRI(spec, sandboxID, pod),
		SandboxConfig: sbCfg,
	})
	if err != nil {
		err = criError(fmt.Sprintf("create container %s (image %s)", spec.Name, spec.Image), err)
		r.failed(err)
		return "", err
	}
	id := resp.GetContainerId()
	r.watch.note(change{kind: containerCreated, sandboxID: sandboxID, containerID: id, container: r.containerItem(ctx, b, id)})
	return id, nil
}

// StartContainer starts a created container. containerd refuses to start a
// running or exited one with a bare UNKNOWN, so a failed start is checked
// against the container's state: running is success, exited and a stopped
// sandbox are FAILED_PRECONDITION.
func (r *criRuntime) StartContainer(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("%w: container_id is required", errInvalid)
	}
	b, err := r.backend()
	if err != nil {
		return err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	defer r.watch.begin(id)()
	_, err = b.rt.StartContainer(ctx, &criapi.StartContainerRequest{ContainerId: id})
	if err == nil {
		r.watch.note(change{kind: containerStarted, containerID: id})
		return nil
	}
	err = criError("start container "+id, err)
	if isNotFound(err) || isUncertainTransport(err) {
		r.failed(err)
		return err
	}
	c, statusErr := b.containerStatus(ctx, id)
	if statusErr != nil {
		r.failed(err)
		return err
	}
	switch c.State {
	case ContainerRunning:
		r.watch.note(change{kind: containerStarted, containerID: id})
		return nil
	case ContainerExited:
		r.watch.note(change{kind: containerExited, containerID: id})
		return fmt.Errorf("%w: start container %s: it has exited", errPrecondition, id)
	}
	r.failed(err)
	if c.SandboxID != "" {
		items, listErr := b.listSandboxes(ctx, &criapi.PodSandboxFilter{Id: c.SandboxID})
		if listErr == nil && (len(items) == 0 || items[0].GetState() != criapi.PodSandboxState_SANDBOX_READY) {
			return fmt.Errorf("%w: start container %s: its sandbox %s is not ready", errPrecondition, id, c.SandboxID)
		}
	}
	return err
}

// StopContainer stops a container, killing it after timeout; an unknown or
// exited container is already stopped. containerd 1.6 under load sometimes
// fails the kill ("ttrpc: closed") of a container that did exit, so a
// failed stop is checked against the container's state before it counts.
func (r *criRuntime) StopContainer(ctx context.Context, id string, timeout time.Duration) error {
	if id == "" {
		return fmt.Errorf("%w: container_id is required", errInvalid)
	}
	b, err := r.backend()
	if err != nil {
		return err
	}
	ctx, cancel := b.runtimeCall(ctx, timeout)
	defer cancel()
	if err := r.awaitCRIExits(ctx, b, r.watch.pendingExits(id)); err != nil {
		return err
	}
	// The task's exit comes while the call waits for it; the note below
	// reports it.
	defer r.watch.begin(id)()
	_, err = b.rt.StopContainer(ctx, &criapi.StopContainerRequest{ContainerId: id, Timeout: int64(timeout / time.Second)})
	err = criError("stop container "+id, err)
	switch {
	case err == nil:
	case isNotFound(err):
		r.watch.notFound(id)
		return nil
	case isUncertainTransport(err):
		r.failed(err)
		return err
	default:
		c, statusErr := b.containerStatus(ctx, id)
		switch {
		case isNotFound(statusErr):
			r.watch.notFound(id)
			return nil
		case statusErr != nil || c.State != ContainerExited:
			r.failed(err)
			return err
		}
	}
	r.watch.note(change{kind: containerExited, containerID: id})
	return nil
}

// RemoveContainer removes a container, killing it if needed; an unknown one
// is already removed, and a task a cut-short start left is deleted
// (removeContainer).
func (r *criRuntime) RemoveContainer(ctx context.Context, id string) error {
	return r.teardown(ctx, "container_id", "remove container", id, change{kind: containerRemoved, containerID: id},
		func(ctx context.Context, b *backend) error { return b.removeContainer(ctx, id) })
}

// ContainerStatus reports one container.
func (r *criRuntime) ContainerStatus(ctx context.Context, id string) (Container, error) {
	if id == "" {
		return Container{}, fmt.Errorf("%w: container_id is required", errInvalid)
	}
	b, err := r.backend()
	if err != nil {
		return Container{}, err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	c, err := b.containerStatus(ctx, id)
	if err != nil {
		return c, err
	}
	return r.watch.withExit(c), nil
}

// containerStatus asks for one container. Its sandbox comes from the
// plugin's label; a container made by someone else is looked up by list.
func (b *backend) containerStatus(ctx context.Context, id string) (Container, error) {
	resp, err := b.rt.ContainerStatus(ctx, &criapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		return Container{}, criError("container status "+id, err)
	}
	st := resp.GetStatus()
	c := containerStatusFromCRI(st)
	if c.SandboxID == "" {
		list, err := b.listContainers(ctx, &criapi.ContainerFilter{Id: st.GetId()})
		if err != nil {
			return Container{}, err
		}
		for _, item := range list {
			if item.GetId() == st.GetId() {
				c.SandboxID = item.GetPodSandboxId()
			}
		}
	}
	return c, nil
}

// ListContainers lists the containers f selects: from the watcher's
// snapshot while it is current (serve.go), else from CRI.
func (r *criRuntime) ListContainers(ctx context.Context, f ContainerFilter) ([]Container, error) {
	b, err := r.backend()
	if err != nil {
		return nil, err
	}
	if out, ok := r.watch.containers(f); ok {
		return out, nil
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	items, err := b.listContainers(ctx, containerFilterToCRI(f))
	if err != nil {
		return nil, err
	}
	var out []Container
	for _, item := range items {
		// containerd takes ID filters as prefixes; the contract wants them exact.
		if f.ID != "" && item.GetId() != f.ID || f.SandboxID != "" && item.GetPodSandboxId() != f.SandboxID {
			continue
		}
		out = append(out, containerFromCRI(item))
	}
	return out, nil
}

func (b *backend) listContainers(ctx context.Context, f *criapi.ContainerFilter) ([]*criapi.Container, error) {
	resp, err := b.rt.ListContainers(ctx, &criapi.ListContainersRequest{Filter: f})
	if err != nil {
		return nil, criError("list containers", err)
	}
	return resp.GetContainers(), nil
}

func containerConfigToCRI(spec ContainerSpec, sandboxID string, pod *SandboxSpec) *criapi.ContainerConfig {
	cfg := &criapi.ContainerConfig{
		Metadata:    &criapi.ContainerMetadata{Name: spec.Name, Attempt: spec.Attempt},
		Image:       &criapi.ImageSpec{Image: spec.Image},
		Command:     spec.Command,
		Args:        spec.Args,
		WorkingDir:  spec.WorkingDir,
		Labels:      containerLabels(spec, sandboxID, pod),
		Annotations: spec.Annotations,
		LogPath:     spec.LogPath,
		Stdin:       spec.Stdin,
		Tty:         spec.TTY,
	}
	for _, e := range spec.Env {
		cfg.Envs = append(cfg.Envs, &criapi.KeyValue{Key: e.Key, Value: []byte(e.Value)})
	}
	for _, m := range spec.Mounts {
		cfg.Mounts = append(cfg.Mounts, &criapi.Mount{ContainerPath: m.ContainerPath, HostPath: m.HostPath, Readonly: m.ReadOnly,
			Propagation: propagationToCRI[m.Propagation]})
	}
	for _, d := range spec.Devices {
		perms := d.Permissions
		if perms == "" {
			perms = "rwm"
		}
		cfg.Devices = append(cfg.Devices, &criapi.Device{ContainerPath: d.ContainerPath, HostPath: d.HostPath, Permissions: perms})
	}
	cfg.Linux = &criapi.LinuxContainerConfig{SecurityContext: containerSecurityToCRI(spec.Security, pod, spec.TargetID)}
	if res := spec.Resources; res != nil {
		cfg.Linux.Resources = &criapi.LinuxContainerResources{
			CpuPeriod:          res.CPUPeriod,
			CpuQuota:           res.CPUQuota,
			CpuShares:          res.CPUShares,
			MemoryLimitInBytes: res.MemoryLimitInBytes,
			OomScoreAdj:        res.OOMScoreAdj,
		}
	}
	return cfg
}

var containerStatesFromCRI = map[criapi.ContainerState]ContainerState{
	criapi.ContainerState_CONTAINER_CREATED: ContainerCreated,
	criapi.ContainerState_CONTAINER_RUNNING: ContainerRunning,
	criapi.ContainerState_CONTAINER_EXITED:  ContainerExited,
	criapi.ContainerState_CONTAINER_UNKNOWN: ContainerUnknown,
}

var containerStatesToCRI = map[ContainerState]criapi.ContainerState{
	ContainerCreated: criapi.ContainerState_CONTAINER_CREATED,
	ContainerRunning: criapi.ContainerState_CONTAINER_RUNNING,
	ContainerExited:  criapi.ContainerState_CONTAINER_EXITED,
	ContainerUnknown: criapi.ContainerState_CONTAINER_UNKNOWN,
}

func containerStateFromCRI(s criapi.ContainerState) ContainerState {
	if st, ok := containerStatesFromCRI[s]; ok {
		return st
	}
	return ContainerUnknown
}

func containerFilterToCRI(f ContainerFilter) *criapi.ContainerFilter {
	out := &criapi.ContainerFilter{Id: f.ID, PodSandboxId: f.SandboxID, LabelSelector: f.Labels}
	if s, ok := containerStatesToCRI[f.State]; ok {
		out.State = &criapi.ContainerStateValue{State: s}
	}
	return out
}

func containerFromCRI(c *criapi.Container) Container {
	return Container{
		ID:          c.GetId(),
		SandboxID:   c.GetPodSandboxId(),
		Name:        c.GetMetadata().GetName(),
		Attempt:     c.GetMetadata().GetAttempt(),
		State:       containerStateFromCRI(c.GetState()),
		Image:       c.GetImage().GetImage(),
		ImageRef:    c.GetImageRef(),
		CreatedAt:   c.GetCreatedAt(),
		Labels:      hostLabels(c.GetLabels()),
		Annotations: c.GetAnnotations(),
	}
}

// containerStatusFromCRI converts a status. containerd 1.6 stamps a start
// once StartContainer returns and an exit when the task ends, so a
// container that exits at once can finish "before" it started; its finish
// is then moved to its start.
func containerStatusFromCRI(st *criapi.ContainerStatus) Container {
	finished := st.GetFinishedAt()
	if finished != 0 && finished < st.GetStartedAt() {
		finished = st.GetStartedAt()
	}
	return Container{
		ID:          st.GetId(),
		SandboxID:   st.GetLabels()[labelSandboxID],
		Name:        st.GetMetadata().GetName(),
		Attempt:     st.GetMetadata().GetAttempt(),
		State:       containerStateFromCRI(st.GetState()),
		Image:       st.GetImage().GetImage(),
		ImageRef:    st.GetImageRef(),
		CreatedAt:   st.GetCreatedAt(),
		StartedAt:   st.GetStartedAt(),
		FinishedAt:  finished,
		ExitCode:    st.GetExitCode(),
		Reason:      st.GetReason(),
		Message:     st.GetMessage(),
		Labels:      hostLabels(st.GetLabels()),
		Annotations: st.GetAnnotations(),
		LogPath:     st.GetLogPath(),
	}
}

// propagationToCRI maps a mount's propagation onto CRI's.
var propagationToCRI = map[Propagation]criapi.MountPropagation{
	PropagationPrivate:         criapi.MountPropagation_PROPAGATION_PRIVATE,
	PropagationHostToContainer: criapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER,
	PropagationBidirectional:   criapi.MountPropagation_PROPAGATION_BIDIRECTIONAL,
}
