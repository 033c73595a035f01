package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// checkPodCgroup checks spec's pod cgroup and returns its path; "" when it
// has none.
func checkPodCgroup(spec SandboxSpec) (string, error) {
	if spec.PodCgroup == nil {
		return "", nil
	}
	p, err := podCgroupPath(spec.PodCgroup.QOSClass, spec.UID)
	if err != nil {
		return "", err
	}
	return p, checkPodCgroupResources(spec.PodCgroup.Resources)
}

// cgroupParent is the CRI cgroup parent of spec: its pod cgroup, if it has
// one (checked by checkPodCgroup), else its own.
func cgroupParent(spec SandboxSpec) string {
	if spec.PodCgroup != nil {
		if p, err := podCgroupPath(spec.PodCgroup.QOSClass, spec.UID); err == nil {
			return p
		}
	}
	return spec.CgroupParent
}

// sandboxLabels are the CRI labels of spec: the host's, plus the QoS class
// of its pod cgroup if it has one.
func sandboxLabels(spec SandboxSpec) map[string]string {
	if spec.PodCgroup == nil {
		return spec.Labels
	}
	out := make(map[string]string, len(spec.Labels)+1)
	maps.Copy(out, spec.Labels)
	out[labelPodCgroupQOS] = spec.PodCgroup.QOSClass
	return out
}

// withPodCgroup returns pod with the pod cgroup the sandbox sandboxID was
// run with, read from the sandbox's label. containerd 1.6 takes a
// container's cgroup parent from the sandbox config CreateContainer is
// given, not from the sandbox, so a config without pod_cgroup would put the
// container outside the pod cgroup (a sandbox with one needs a config), and
// one with a pod cgroup the sandbox was run without (podCgroupUnder) into a
// cgroup of its own. Only a required pod cgroup is taken as given: its
// sandbox has it or was refused.
func (b *backend) withPodCgroup(ctx context.Context, sandboxID string, pod *SandboxSpec) (*SandboxSpec, error) {
	if pod != nil && pod.PodCgroup != nil && pod.PodCgroup.Required {
		return pod, nil
	}
	items, err := b.listSandboxes(ctx, &criapi.PodSandboxFilter{Id: sandboxID})
	if err != nil {
		return nil, err
	}
	for _, sb := range items {
		if sb.GetId() != sandboxID { // containerd takes the ID as a prefix
			continue
		}
		qos, ok := sb.GetLabels()[labelPodCgroupQOS]
		switch {
		case !ok && (pod == nil || pod.PodCgroup == nil):
			return pod, nil
		case !ok:
			out := *pod
			out.PodCgroup = nil
			return &out, nil
		case pod == nil:
			return nil, fmt.Errorf("%w: sandbox_config is required: sandbox %s has a pod cgroup", errInvalid, sandboxID)
		case pod.PodCgroup != nil:
			return pod, nil
		default:
			out := *pod
			out.PodCgroup = &PodCgroup{QOSClass: qos}
			return &out, nil
		}
	}
	return pod, nil
}

// makePodCgroup makes the pod cgroup p of spec with its limits (checked
// against containerd's cgroup driver by podCgroupUnder) and sets its QoS
// cgroup's shares.
func (r *criRuntime) makePodCgroup(ctx context.Context, spec SandboxSpec, p string) error {
	if err := r.cgroups.create(p, spec.PodCgroup.Resources); err != nil {
		r.dropPodCgroup(ctx, p, 0)
		return cgroupError(p, err)
	}
	r.syncQOSShares(spec.PodCgroup.QOSClass)
	return nil
}

// syncQOSShares sets the CPU weight of the QoS cgroup of qos from its pod
// cgroups (cgroupFS.setQOSShares) after one of them changed; a failure is
// logged: the pods run, only their class's weight is stale until the next
// change.
func (r *criRuntime) syncQOSShares(qos string) {
	r.qosMu.Lock()
	defer r.qosMu.Unlock()
	if err := r.cgroups.setQOSShares(qos); err != nil {
		r.log.Warn("QoS cgroup's cpu shares not set", "qos", qos, "err", err)
	}
}

// dropPodCgroup removes the pod cgroup p, waiting up to busyWait (within
// ctx) while the kernel finds it busy; a cgroup it cannot remove is logged
// and left.
func (r *criRuntime) dropPodCgroup(ctx context.Context, p string, busyWait time.Duration) {
	fs := r.cgroups
	fs.busyWait = busyWait
	if err := fs.remove(ctx, p); err != nil {
		r.log.Warn("pod cgroup left behind", "cgroup", p, "err", err)
	}
	if qos, ok := qosOfPath(p); ok {
		r.syncQOSShares(qos)
	}
}

// cgroupError is the kernel's error err on the pod cgroup p, UNKNOWN in
// the contract.
func cgroupError(p string, err error) error {
	return &backendError{op: "pod cgroup " + p, class: errBackend, msg: err.Error()}
}

// podCgroupOf is the pod cgroup of the sandbox id, which is about to be
// removed: "" when it has none, is unknown, or another ready sandbox of its
// pod still runs in it. Only a sandbox with a pod cgroup costs a listing
// (of those with one). The error is CRI's, unclassified.
func (b *backend) podCgroupOf(ctx context.Context, id string) (string, error) {
	resp, err := b.rt.PodSandboxStatus(ctx, &criapi.PodSandboxStatusRequest{PodSandboxId: id})
	if err != nil {
		if isNotFound(criError("sandbox status "+id, err)) {
			return "", nil // RemovePodSandbox tells
		}
		return "", err
	}
	qos, ok := resp.GetStatus().GetLabels()[labelPodCgroupQOS]
	if !ok {
		return "", nil
	}
	uid := resp.GetStatus().GetMetadata().GetUid()
	others, err := b.rt.ListPodSandbox(ctx, &criapi.ListPodSandboxRequest{Filter: &criapi.PodSandboxFilter{
		State: &criapi.PodSandboxStateValue{State: criapi.PodSandboxState_SANDBOX_READY}, LabelSelector: map[string]string{labelPodCgroupQOS: qos},
	}})
	if err != nil {
		return "", err
	}
	for _, sb := range others.GetItems() {
		if sb.GetId() != id && sb.GetMetadata().GetUid() == uid {
			return "", nil
		}
	}
	p, err := podCgroupPath(qos, uid)
	if err != nil {
		return "", nil // not made by this plugin
	}
	return p, nil
}

// podCgroupUnder is spec's pod cgroup as containerd's cgroup driver for
// its runtime handler allows it: under cgroupfs the one asked for; under
// systemd, where this plugin makes no pod cgroups, an error for a required
// one and nil (no pod cgroup, the sandbox in containerd's default cgroup)
// for any other, whose containers' own limits are all it carries.
func (r *criRuntime) podCgroupUnder(ctx context.Context, b *backend, spec SandboxSpec) (*PodCgroup, error) {
	err := r.checkCgroupfs(ctx, b, spec.RuntimeHandler)
	switch {
	case err == nil:
		return spec.PodCgroup, nil
	case !spec.PodCgroup.Required && errors.Is(err, errInvalid):
		r.log.Debug("sandbox run without a pod cgroup", "pod", spec.Namespace+"/"+spec.Name, "reason", err)
		return nil, nil
	default:
		return nil, err
	}
}

// checkCgroupfs refuses a pod cgroup when containerd runs the runtime
// handler's sandboxes with the systemd cgroup driver, which takes cgroup
// parents as systemd slices: the plugin makes cgroupfs paths only. It
// reads containerd's CRI config from its verbose status; a config it
// cannot read is taken for cgroupfs, containerd's default, and logged.
func (r *criRuntime) checkCgroupfs(ctx context.Context, b *backend, handler string) error {
	resp, err := b.rt.Status(ctx, &criapi.StatusRequest{Verbose: true})
	if err != nil {
		return criError("status", err)
	}
	systemd, err := systemdCgroup(resp.GetInfo()["config"], handler)
	if err != nil {
		r.log.Warn("cgroup driver of containerd unknown, taken for cgroupfs", "err", err)
	}
	if systemd {
		return fmt.Errorf("%w: pod_cgroup: containerd runs runtime handler %q with the systemd cgroup driver (SystemdCgroup); runtime-containerd makes pod cgroups with cgroupfs only", errInvalid, handler)
	}
	return nil
}

// systemdCgroup reports whether containerd's CRI config (the JSON of its
// verbose status) has the runtime handler (empty: the default one) use
// the systemd cgroup driver; an error when the config does not say.
func systemdCgroup(config, handler string) (bool, error) {
	var cfg struct {
		SystemdCgroup bool `json:"systemdCgroup"` // runtime v1's, deprecated
		Containerd    struct {
			DefaultRuntimeName string `json:"defaultRuntimeName"`
			Runtimes           map[string]struct {
				Options map[string]any `json:"options"`
			} `json:"runtimes"`
		} `json:"containerd"`
	}
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		return false, fmt.Errorf("containerd's CRI config: %w", err)
	}
	if handler == "" {
		handler = cfg.Containerd.DefaultRuntimeName
	}
	rt, ok := cfg.Containerd.Runtimes[handler]
	if !ok {
		return cfg.SystemdCgroup, fmt.Errorf("containerd's CRI config has no runtime %q", handler)
	}
	on, _ := rt.Options["SystemdCgroup"].(bool)
	return on || cfg.SystemdCgroup, nil
}

// UpdateSandboxResources rewrites the limits of the sandbox id's pod
// cgroup. The kernel's refusal (a memory limit below usage) comes back as
// it is; the limits written before it stay.
func (r *criRuntime) UpdateSandboxResources(ctx context.Context, id string, res *Resources) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: sandbox_id is required", errInvalid)
	case res == nil:
		return fmt.Errorf("%w: resources are required", errInvalid)
	}
	if err := checkPodCgroupResources(*res); err != nil {
		return err
	}
	b, err := r.backend()
	if err != nil {
		return err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	items, err := b.listSandboxes(ctx, &criapi.PodSandboxFilter{Id: id})
	if err != nil {
		return err
	}
	for _, sb := range items {
		if sb.GetId() != id { // containerd takes the ID as a prefix
			continue
		}
		qos, ok := sb.GetLabels()[labelPodCgroupQOS]
		if !ok {
			return fmt.Errorf("%w: sandbox %s was run without a pod cgroup", errPrecondition, id)
		}
		p, err := podCgroupPath(qos, sb.GetMetadata().GetUid())
		if err != nil {
			return fmt.Errorf("%w: sandbox %s: %w", errPrecondition, id, err)
		}
		if err := r.cgroups.update(p, *res); err != nil {
			return cgroupError(p, err)
		}
		r.syncQOSShares(qos)
		return nil
	}
	return fmt.Errorf("%w: sandbox %s", errNotFound, id)
}

// UpdateContainerResources changes a created or running container's CPU
// and memory limits through CRI. containerd 1.6 keeps a value of 0 as it
// was, where CreateContainer leaves 0 unlimited: a quota or memory limit
// of 0 is sent as -1 (unlimited), shares and period of 0 stay. The OOM
// score is not sent: containerd keeps it. containerd updates only the spec
// of an exited container, without error; the contract wants
// FAILED_PRECONDITION, so the state is asked first and again after a
// failed update.
func (r *criRuntime) UpdateContainerResources(ctx context.Context, id string, res *Resources) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: container_id is required", errInvalid)
	case res == nil:
		return fmt.Errorf("%w: resources are required", errInvalid)
	}
	b, err := r.backend()
	if err != nil {
		return err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	exited := func() error {
		c, err := b.containerStatus(ctx, id)
		if err != nil {
			return err
		}
		if c.State == ContainerExited {
			return fmt.Errorf("%w: update container %s: it has exited", errPrecondition, id)
		}
		return nil
	}
	if err := exited(); err != nil {
		return err
	}
	_, err = b.rt.UpdateContainerResources(ctx, &criapi.UpdateContainerResourcesRequest{ContainerId: id, Linux: containerResourcesToCRI(*res)})
	if err = criError("update container "+id, err); err != nil && !isNotFound(err) && !isUncertainTransport(err) {
		if stateErr := exited(); stateErr != nil {
			return stateErr
		}
	}
	return err
}

// containerResourcesToCRI is the CRI update of res (UpdateContainerResources).
func containerResourcesToCRI(res Resources) *criapi.LinuxContainerResources {
	unlimited := func(v int64) int64 {
		if v == 0 {
			return -1
		}
		return v
	}
	return &criapi.LinuxContainerResources{
		CpuPeriod:          res.CPUPeriod,
		CpuQuota:           unlimited(res.CPUQuota),
		CpuShares:          res.CPUShares,
		MemoryLimitInBytes: unlimited(res.MemoryLimitInBytes),
	}
}
