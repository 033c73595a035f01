package main

import (
	"context"
	"fmt"

	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RunSandbox creates and starts a sandbox and returns its ID.
func (r *criRuntime) RunSandbox(ctx context.Context, spec SandboxSpec) (string, error) {
	if spec.Name == "" || spec.Namespace == "" || spec.UID == "" {
		return "", fmt.Errorf("%w: sandbox metadata needs a name, a namespace and a uid", errInvalid)
	}
	if err := checkLabels(spec.Labels); err != nil {
		return "", err
	}
	podCgroup, err := checkPodCgroup(spec)
	if err != nil {
		return "", err
	}
	b, err := r.backend()
	if err != nil {
		return "", err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	if podCgroup != "" {
		if spec.PodCgroup, err = r.podCgroupUnder(ctx, b, spec); err != nil {
			return "", err
		}
		if spec.PodCgroup == nil {
			podCgroup = ""
		} else if err := r.makePodCgroup(ctx, spec, podCgroup); err != nil {
			return "", err
		}
	}
	defer r.watch.begin("")()
	resp, err := b.rt.RunPodSandbox(ctx, &criapi.RunPodSandboxRequest{Config: sandboxConfigToCRI(spec), RuntimeHandler: spec.RuntimeHandler})
	if err != nil {
		err = criError("run sandbox", err)
		r.failed(err)
		if podCgroup != "" {
			r.dropPodCgroup(ctx, podCgroup, 0)
		}
		return "", err
	}
	id := resp.GetPodSandboxId()
	r.watch.note(change{kind: sandboxReadied, sandboxID: id, sandbox: r.sandboxItem(ctx, b, id)})
	return id, nil
}

// StopSandbox stops a sandbox and its containers; an unknown one is
// already stopped.
func (r *criRuntime) StopSandbox(ctx context.Context, id string) error {
	return r.teardown(ctx, "sandbox_id", "stop sandbox", id, change{kind: sandboxStopped, sandboxID: id},
		func(ctx context.Context, b *backend) error {
			_, err := b.rt.StopPodSandbox(ctx, &criapi.StopPodSandboxRequest{PodSandboxId: id})
			return err
		})
}

// RemoveSandbox removes a sandbox and its containers; an unknown one is
// already removed (removeSandbox). Its pod cgroup goes after it unless
// another ready sandbox of the pod still runs in it; a cgroup that cannot
// be removed is logged and left (podCgroupOf).
func (r *criRuntime) RemoveSandbox(ctx context.Context, id string) error {
	var podCgroup string
	err := r.teardown(ctx, "sandbox_id", "remove sandbox", id, change{kind: sandboxRemoved, sandboxID: id},
		func(ctx context.Context, b *backend) error {
			p, err := b.podCgroupOf(ctx, id)
			if err != nil {
				return err
			}
			podCgroup = p
			return b.removeSandbox(ctx, id)
		})
	if err == nil && podCgroup != "" {
		// The sandbox is gone: its cgroup goes now or never (nothing
		// sweeps pod cgroups later), so a caller giving up does not cut
		// the wait short; busyWait bounds it.
		r.dropPodCgroup(context.WithoutCancel(ctx), podCgroup, r.cgroups.busyWait)
	}
	return err
}

// SandboxStatus reports one sandbox.
func (r *criRuntime) SandboxStatus(ctx context.Context, id string) (Sandbox, error) {
	if id == "" {
		return Sandbox{}, fmt.Errorf("%w: sandbox_id is required", errInvalid)
	}
	b, err := r.backend()
	if err != nil {
		return Sandbox{}, err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	resp, err := b.rt.PodSandboxStatus(ctx, &criapi.PodSandboxStatusRequest{PodSandboxId: id})
	if err != nil {
		return Sandbox{}, criError("sandbox status "+id, err)
	}
	sb := sandboxStatusFromCRI(resp.GetStatus())
	if sb.State == SandboxReady {
		r.ips.remember(sb.ID, sb.IP)
	}
	return sb, nil
}

// ListSandboxes lists the sandboxes f selects, each ready one with its IP:
// from the watcher's snapshot while it is current (serve.go), else from CRI.
func (r *criRuntime) ListSandboxes(ctx context.Context, f SandboxFilter) ([]Sandbox, error) {
	b, err := r.backend()
	if err != nil {
		return nil, err
	}
	ctx, cancel := b.runtimeCall(ctx, 0)
	defer cancel()
	if out, ok := r.watch.sandboxes(f); ok {
		r.ips.fill(ctx, b.rt, out)
		return out, nil
	}
	items, err := b.listSandboxes(ctx, sandboxFilterToCRI(f))
	if err != nil {
		return nil, err
	}
	var out []Sandbox
	for _, item := range items {
		// containerd takes an ID filter as a prefix; the contract wants it exact.
		if f.ID != "" && item.GetId() != f.ID {
			continue
		}
		out = append(out, sandboxFromCRI(item))
	}
	r.ips.fill(ctx, b.rt, out)
	return out, nil
}

func (b *backend) listSandboxes(ctx context.Context, f *criapi.PodSandboxFilter) ([]*criapi.PodSandbox, error) {
	resp, err := b.rt.ListPodSandbox(ctx, &criapi.ListPodSandboxRequest{Filter: f})
	if err != nil {
		return nil, criError("list sandboxes", err)
	}
	return resp.GetItems(), nil
}

// sandboxConfigToCRI is the CRI config of spec.
func sandboxConfigToCRI(spec SandboxSpec) *criapi.PodSandboxConfig {
	// A pod on the node's network shares the node's UTS namespace, where
	// runc refuses to set a hostname; it keeps the node's, as with kubelet.
	hostname := spec.Hostname
	if spec.HostNetwork {
		hostname = ""
	}
	cfg := &criapi.PodSandboxConfig{
		Metadata:     &criapi.PodSandboxMetadata{Name: spec.Name, Namespace: spec.Namespace, Uid: spec.UID, Attempt: spec.Attempt},
		Hostname:     hostname,
		LogDirectory: spec.LogDirectory,
		Labels:       sandboxLabels(spec),
		Annotations:  spec.Annotations,
		Linux: &criapi.LinuxPodSandboxConfig{
			CgroupParent:    cgroupParent(spec),
			SecurityContext: sandboxSecurityToCRI(spec),
			Sysctls:         spec.Sysctls,
		},
	}
	if spec.DNS != nil {
		cfg.DnsConfig = &criapi.DNSConfig{Servers: spec.DNS.Servers, Searches: spec.DNS.Searches, Options: spec.DNS.Options}
	}
	return cfg
}

var sandboxStatesToCRI = map[SandboxState]criapi.PodSandboxState{
	SandboxReady:    criapi.PodSandboxState_SANDBOX_READY,
	SandboxNotReady: criapi.PodSandboxState_SANDBOX_NOTREADY,
}

func sandboxStateFromCRI(s criapi.PodSandboxState) SandboxState {
	if s == criapi.PodSandboxState_SANDBOX_READY {
		return SandboxReady
	}
	return SandboxNotReady
}

func sandboxFilterToCRI(f SandboxFilter) *criapi.PodSandboxFilter {
	out := &criapi.PodSandboxFilter{Id: f.ID, LabelSelector: f.Labels}
	if s, ok := sandboxStatesToCRI[f.State]; ok {
		out.State = &criapi.PodSandboxStateValue{State: s}
	}
	return out
}

func sandboxFromCRI(sb *criapi.PodSandbox) Sandbox {
	md := sb.GetMetadata()
	return Sandbox{
		ID:          sb.GetId(),
		Name:        md.GetName(),
		Namespace:   md.GetNamespace(),
		UID:         md.GetUid(),
		Attempt:     md.GetAttempt(),
		State:       sandboxStateFromCRI(sb.GetState()),
		CreatedAt:   sb.GetCreatedAt(),
		Labels:      hostLabels(sb.GetLabels()),
		Annotations: sb.GetAnnotations(),
	}
}

func sandboxStatusFromCRI(st *criapi.PodSandboxStatus) Sandbox {
	md := st.GetMetadata()
	return Sandbox{
		ID:          st.GetId(),
		Name:        md.GetName(),
		Namespace:   md.GetNamespace(),
		UID:         md.GetUid(),
		Attempt:     md.GetAttempt(),
		State:       sandboxStateFromCRI(st.GetState()),
		CreatedAt:   st.GetCreatedAt(),
		Labels:      hostLabels(st.GetLabels()),
		Annotations: st.GetAnnotations(),
		IP:          st.GetNetwork().GetIp(),
	}
}
