package main

import (
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Security is the Linux security of a sandbox or container, as the host
// merged it from the pod's and the container's securityContext.
type Security struct {
	RunAsUser, RunAsGroup *int64 // nil: the image's
	RunAsUsername         string
	SupplementalGroups    []int64
	Privileged            bool
	AddCaps, DropCaps     []string // without CAP_; "ALL" is every one
	ReadOnlyRootfs        bool
	NoNewPrivs            bool
	Seccomp               *SeccompProfile // nil: the runtime's choice
}

// SeccompProfile is a seccomp profile: RuntimeDefault, Unconfined, or a
// Localhost file at Path.
type SeccompProfile struct {
	Type SeccompType
	Path string
}

// SeccompType is the kind of a seccomp profile; 0 is unset.
type SeccompType int

// The seccomp profile types, in the order of proto/runtime/v1's.
const (
	SeccompRuntimeDefault SeccompType = iota + 1
	SeccompUnconfined
	SeccompLocalhost
)

// The paths of /proc and /sys a container that is not privileged cannot
// see or cannot write: the kubelet's defaults for procMount Default,
// which it passes to CRI (containerd applies none of its own when given
// a security context).
var (
	defaultMaskedPaths = []string{
		"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
		"/sys/firmware", "/sys/devices/virtual/powercap",
	}
	defaultReadonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

// namespacesToCRI are the namespaces of a pod's sandbox and containers:
// the pod's network and IPC, or the node's; each container its own PID
// namespace unless the pod shares one (the sandbox's) or uses the node's.
func namespacesToCRI(pod *SandboxSpec) *criapi.NamespaceOption {
	ns := &criapi.NamespaceOption{Network: criapi.NamespaceMode_POD, Pid: criapi.NamespaceMode_CONTAINER, Ipc: criapi.NamespaceMode_POD}
	if pod == nil {
		return ns
	}
	if pod.HostNetwork {
		ns.Network = criapi.NamespaceMode_NODE
	}
	switch {
	case pod.HostPID:
		ns.Pid = criapi.NamespaceMode_NODE
	case pod.SharePID:
		ns.Pid = criapi.NamespaceMode_POD
	}
	if pod.HostIPC {
		ns.Ipc = criapi.NamespaceMode_NODE
	}
	return ns
}

func int64Value(v *int64) *criapi.Int64Value {
	if v == nil {
		return nil
	}
	return &criapi.Int64Value{Value: *v}
}

func seccompToCRI(p *SeccompProfile) *criapi.SecurityProfile {
	if p == nil {
		return nil
	}
	switch p.Type {
	case SeccompRuntimeDefault:
		return &criapi.SecurityProfile{ProfileType: criapi.SecurityProfile_RuntimeDefault}
	case SeccompLocalhost:
		return &criapi.SecurityProfile{ProfileType: criapi.SecurityProfile_Localhost, LocalhostRef: p.Path}
	case SeccompUnconfined:
		return &criapi.SecurityProfile{ProfileType: criapi.SecurityProfile_Unconfined}
	}
	return nil
}

// sandboxSecurityToCRI is the sandbox's CRI security context.
func sandboxSecurityToCRI(spec SandboxSpec) *criapi.LinuxSandboxSecurityContext {
	out := &criapi.LinuxSandboxSecurityContext{NamespaceOptions: namespacesToCRI(&spec)}
	if s := spec.Security; s != nil {
		out.RunAsUser, out.RunAsGroup = int64Value(s.RunAsUser), int64Value(s.RunAsGroup)
		out.SupplementalGroups = s.SupplementalGroups
		out.Privileged = s.Privileged
		out.Seccomp = seccompToCRI(s.Seccomp)
	}
	return out
}

// containerSecurityToCRI is the container's CRI security context, with
// the pod's namespaces; without a Security, the runtime's defaults. A
// target joins the PID namespace of that container where the container
// would have its own (an ephemeral container aimed at another, as the
// kubelet's TARGET mode).
func containerSecurityToCRI(s *Security, pod *SandboxSpec, target string) *criapi.LinuxContainerSecurityContext {
	out := &criapi.LinuxContainerSecurityContext{NamespaceOptions: namespacesToCRI(pod)}
	if ns := out.NamespaceOptions; target != "" && ns.Pid == criapi.NamespaceMode_CONTAINER {
		ns.Pid, ns.TargetId = criapi.NamespaceMode_TARGET, target
	}
	if s == nil {
		return out
	}
	out.RunAsUser, out.RunAsGroup = int64Value(s.RunAsUser), int64Value(s.RunAsGroup)
	out.RunAsUsername = s.RunAsUsername
	out.SupplementalGroups = s.SupplementalGroups
	out.Privileged = s.Privileged
	out.ReadonlyRootfs = s.ReadOnlyRootfs
	out.NoNewPrivs = s.NoNewPrivs
	out.Seccomp = seccompToCRI(s.Seccomp)
	if len(s.AddCaps) > 0 || len(s.DropCaps) > 0 {
		out.Capabilities = &criapi.Capability{AddCapabilities: s.AddCaps, DropCapabilities: s.DropCaps}
	}
	if !s.Privileged {
		out.MaskedPaths, out.ReadonlyPaths = defaultMaskedPaths, defaultReadonlyPaths
	}
	return out
}
