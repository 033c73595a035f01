package main

import (
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// The proto side of server.go: proto/runtime/v1 messages to and from the
// logic's Go values. The enums share their numbers with types.go.

func sandboxSpecFromProto(cfg *runtimev1.SandboxConfig) SandboxSpec {
	md := cfg.GetMetadata()
	spec := SandboxSpec{
		Name: md.GetName(), Namespace: md.GetNamespace(), UID: md.GetUid(), Attempt: md.GetAttempt(),
		Hostname:     cfg.GetHostname(),
		LogDirectory: cfg.GetLogDirectory(),
		Labels:       cfg.GetLabels(),
		Annotations:  cfg.GetAnnotations(),
		HostNetwork:  cfg.GetHostNetwork(),
		HostPID:      cfg.GetHostPid(),
		HostIPC:      cfg.GetHostIpc(),
		CgroupParent: cfg.GetCgroupParent(),
		SharePID:     cfg.GetShareProcessNamespace(),
		Sysctls:      cfg.GetSysctls(),
		Security:     securityFromProto(cfg.GetSecurity()),
	}
	if dns := cfg.GetDns(); dns != nil {
		spec.DNS = &DNS{Servers: dns.GetServers(), Searches: dns.GetSearches(), Options: dns.GetOptions()}
	}
	if pc := cfg.GetPodCgroup(); pc != nil {
		spec.PodCgroup = &PodCgroup{QOSClass: pc.GetQosClass(), Required: pc.GetRequired()}
		if r := resourcesFromProto(pc.GetResources()); r != nil {
			spec.PodCgroup.Resources = *r
		}
	}
	return spec
}

// resourcesFromProto converts resources; nil stays nil.
func resourcesFromProto(r *runtimev1.Resources) *Resources {
	if r == nil {
		return nil
	}
	return &Resources{
		CPUPeriod: r.GetCpuPeriod(), CPUQuota: r.GetCpuQuota(), CPUShares: r.GetCpuShares(),
		MemoryLimitInBytes: r.GetMemoryLimitInBytes(), OOMScoreAdj: r.GetOomScoreAdj(),
	}
}

func containerSpecFromProto(cfg *runtimev1.ContainerConfig) ContainerSpec {
	spec := ContainerSpec{
		Name: cfg.GetMetadata().GetName(), Attempt: cfg.GetMetadata().GetAttempt(),
		Image:       cfg.GetImage(),
		Command:     cfg.GetCommand(),
		Args:        cfg.GetArgs(),
		WorkingDir:  cfg.GetWorkingDir(),
		Labels:      cfg.GetLabels(),
		Annotations: cfg.GetAnnotations(),
		LogPath:     cfg.GetLogPath(),
		Stdin:       cfg.GetStdin(),
		TTY:         cfg.GetTty(),
		Security:    securityFromProto(cfg.GetSecurity()),
		TargetID:    cfg.GetTargetContainerId(),
	}
	for _, e := range cfg.GetEnvs() {
		spec.Env = append(spec.Env, EnvVar{Key: e.GetKey(), Value: e.GetValue()})
	}
	for _, m := range cfg.GetMounts() {
		spec.Mounts = append(spec.Mounts, Mount{ContainerPath: m.GetContainerPath(), HostPath: m.GetHostPath(), ReadOnly: m.GetReadonly(),
			Propagation: Propagation(m.GetPropagation())})
	}
	for _, d := range cfg.GetDevices() {
		spec.Devices = append(spec.Devices, Device{ContainerPath: d.GetContainerPath(), HostPath: d.GetHostPath(), Permissions: d.GetPermissions()})
	}
	spec.Resources = resourcesFromProto(cfg.GetResources())
	return spec
}

func sandboxToProto(sb Sandbox) *runtimev1.Sandbox {
	return &runtimev1.Sandbox{
		Id:          sb.ID,
		Metadata:    &runtimev1.SandboxMetadata{Name: sb.Name, Namespace: sb.Namespace, Uid: sb.UID, Attempt: sb.Attempt},
		State:       runtimev1.SandboxState(sb.State),
		CreatedAt:   sb.CreatedAt,
		Labels:      sb.Labels,
		Annotations: sb.Annotations,
		Ip:          sb.IP,
	}
}

func containerToProto(c Container) *runtimev1.Container {
	return &runtimev1.Container{
		Id:          c.ID,
		SandboxId:   c.SandboxID,
		Metadata:    &runtimev1.ContainerMetadata{Name: c.Name, Attempt: c.Attempt},
		State:       runtimev1.ContainerState(c.State),
		Image:       c.Image,
		ImageRef:    c.ImageRef,
		CreatedAt:   c.CreatedAt,
		StartedAt:   c.StartedAt,
		FinishedAt:  c.FinishedAt,
		ExitCode:    c.ExitCode,
		Reason:      c.Reason,
		Message:     c.Message,
		Labels:      c.Labels,
		Annotations: c.Annotations,
		LogPath:     c.LogPath,
	}
}

func imageToProto(img Image) *runtimev1.Image {
	return &runtimev1.Image{Id: img.ID, RepoTags: img.RepoTags, RepoDigests: img.RepoDigests, SizeBytes: img.Size, Uid: img.UID, Username: img.Username}
}

func eventToProto(ev Event) *runtimev1.Event {
	return &runtimev1.Event{
		Type:        runtimev1.EventType(ev.Type),
		Timestamp:   ev.Time,
		SandboxId:   ev.SandboxID,
		ContainerId: ev.ContainerID,
		Labels:      ev.Labels,
	}
}

func securityFromProto(sc *runtimev1.SecurityContext) *Security {
	if sc == nil {
		return nil
	}
	out := &Security{
		RunAsUser: sc.RunAsUser, RunAsGroup: sc.RunAsGroup, RunAsUsername: sc.GetRunAsUsername(),
		SupplementalGroups: sc.GetSupplementalGroups(),
		Privileged:         sc.GetPrivileged(),
		AddCaps:            sc.GetAddCapabilities(),
		DropCaps:           sc.GetDropCapabilities(),
		ReadOnlyRootfs:     sc.GetReadonlyRootfs(),
		NoNewPrivs:         sc.GetNoNewPrivs(),
	}
	if p := sc.GetSeccomp(); p != nil && p.GetProfileType() != runtimev1.SecurityProfile_PROFILE_TYPE_UNSPECIFIED {
		out.Seccomp = &SeccompProfile{Type: SeccompType(p.GetProfileType()), Path: p.GetLocalhostRef()}
	}
	return out
}
