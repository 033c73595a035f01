package main

import (
	"errors"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func TestSandboxConfigToCRI(t *testing.T) {
	base := SandboxSpec{Name: "web", Namespace: "ns", UID: "u1", Attempt: 2, Hostname: "web-0", LogDirectory: "/logs/u1", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}, CgroupParent: "/pods/u1"}
	meta := &criapi.PodSandboxMetadata{Name: "web", Namespace: "ns", Uid: "u1", Attempt: 2}
	want := func(hostname string, network, pid, ipc criapi.NamespaceMode, dns *criapi.DNSConfig) *criapi.PodSandboxConfig {
		return &criapi.PodSandboxConfig{
			Metadata: meta, Hostname: hostname, LogDirectory: "/logs/u1", DnsConfig: dns,
			Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"},
			Linux: &criapi.LinuxPodSandboxConfig{CgroupParent: "/pods/u1", SecurityContext: &criapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &criapi.NamespaceOption{Network: network, Pid: pid, Ipc: ipc},
			}},
		}
	}
	tests := []struct {
		name   string
		adjust func(*SandboxSpec)
		want   *criapi.PodSandboxConfig
	}{
		{"pod network", func(*SandboxSpec) {}, want("web-0", criapi.NamespaceMode_POD, criapi.NamespaceMode_CONTAINER, criapi.NamespaceMode_POD, nil)},
		{"host network keeps the node's hostname", func(s *SandboxSpec) { s.HostNetwork = true }, want("", criapi.NamespaceMode_NODE, criapi.NamespaceMode_CONTAINER, criapi.NamespaceMode_POD, nil)},
		{"host pid and ipc", func(s *SandboxSpec) { s.HostPID, s.HostIPC = true, true }, want("web-0", criapi.NamespaceMode_POD, criapi.NamespaceMode_NODE, criapi.NamespaceMode_NODE, nil)},
		{"shared pid", func(s *SandboxSpec) { s.SharePID = true }, want("web-0", criapi.NamespaceMode_POD, criapi.NamespaceMode_POD, criapi.NamespaceMode_POD, nil)},
		{"host pid wins over shared", func(s *SandboxSpec) { s.SharePID, s.HostPID = true, true }, want("web-0", criapi.NamespaceMode_POD, criapi.NamespaceMode_NODE, criapi.NamespaceMode_POD, nil)},
		{
			"dns",
			func(s *SandboxSpec) {
				s.DNS = &DNS{Servers: []string{"10.0.0.10"}, Searches: []string{"ns.svc"}, Options: []string{"ndots:5"}}
			},
			want("web-0", criapi.NamespaceMode_POD, criapi.NamespaceMode_CONTAINER, criapi.NamespaceMode_POD, &criapi.DNSConfig{Servers: []string{"10.0.0.10"}, Searches: []string{"ns.svc"}, Options: []string{"ndots:5"}}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := base
			tt.adjust(&spec)
			if got := sandboxConfigToCRI(spec); !proto.Equal(got, tt.want) {
				t.Errorf("got %v; want %v", got, tt.want)
			}
		})
	}
}

func TestContainerConfigToCRI(t *testing.T) {
	spec := ContainerSpec{
		Name: "app", Attempt: 3, Image: "sha256:abc", Command: []string{"sh"}, Args: []string{"-c", "true"}, WorkingDir: "/w",
		Env: []EnvVar{{"A", "1"}},
		Mounts: []Mount{{ContainerPath: "/data", HostPath: "/var/data", ReadOnly: true},
			{ContainerPath: "/in", HostPath: "/var/in", Propagation: PropagationHostToContainer},
			{ContainerPath: "/both", HostPath: "/var/both", Propagation: PropagationBidirectional}},
		Devices:   []Device{{ContainerPath: "/dev/xvda", HostPath: "/var/pods/u1/volumeDevices/kubernetes.io~fc/disk"}, {ContainerPath: "/dev/ro", HostPath: "/var/ro", Permissions: "r"}},
		Labels:    map[string]string{"podhost.io/container": "app"},
		LogPath:   "app/3.log",
		Stdin:     true,
		TTY:       true,
		Resources: &Resources{CPUPeriod: 100000, CPUQuota: 50000, CPUShares: 512, MemoryLimitInBytes: 1 << 20, OOMScoreAdj: 500},
	}
	want := &criapi.ContainerConfig{
		Metadata: &criapi.ContainerMetadata{Name: "app", Attempt: 3}, Image: &criapi.ImageSpec{Image: "sha256:abc"},
		Command: []string{"sh"}, Args: []string{"-c", "true"}, WorkingDir: "/w",
		Envs: []*criapi.KeyValue{{Key: "A", Value: []byte("1")}},
		Mounts: []*criapi.Mount{{ContainerPath: "/data", HostPath: "/var/data", Readonly: true},
			{ContainerPath: "/in", HostPath: "/var/in", Propagation: criapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER},
			{ContainerPath: "/both", HostPath: "/var/both", Propagation: criapi.MountPropagation_PROPAGATION_BIDIRECTIONAL}},
		Devices: []*criapi.Device{{ContainerPath: "/dev/xvda", HostPath: "/var/pods/u1/volumeDevices/kubernetes.io~fc/disk", Permissions: "rwm"}, {ContainerPath: "/dev/ro", HostPath: "/var/ro", Permissions: "r"}},
		Labels:  map[string]string{"podhost.io/container": "app", labelSandboxID: "sb1", labelPodUID: "u1"},
		LogPath: "app/3.log", Stdin: true, Tty: true,
		Linux: &criapi.LinuxContainerConfig{
			Resources:       &criapi.LinuxContainerResources{CpuPeriod: 100000, CpuQuota: 50000, CpuShares: 512, MemoryLimitInBytes: 1 << 20, OomScoreAdj: 500},
			SecurityContext: &criapi.LinuxContainerSecurityContext{NamespaceOptions: &criapi.NamespaceOption{Pid: criapi.NamespaceMode_CONTAINER}},
		},
	}
	if got := containerConfigToCRI(spec, "sb1", &SandboxSpec{UID: "u1"}); !proto.Equal(got, want) {
		t.Errorf("got %v; want %v", got, want)
	}
	spec.Resources = nil
	got := containerConfigToCRI(spec, "sb1", nil)
	if got.GetLinux().GetResources() != nil || got.GetLabels()[labelPodUID] != "" || got.GetLabels()[labelSandboxID] != "sb1" {
		t.Errorf("without resources and pod: got linux %v labels %v; want no resources, the sandbox label only", got.GetLinux(), got.GetLabels())
	}
	if spec.Labels[labelSandboxID] != "" {
		t.Error("containerConfigToCRI changed the spec's labels")
	}
}

func TestSecurityToCRI(t *testing.T) {
	uid, gid := int64(1000), int64(3000)
	sec := &Security{
		RunAsUser: &uid, RunAsGroup: &gid, SupplementalGroups: []int64{4000},
		AddCaps: []string{"NET_BIND_SERVICE"}, DropCaps: []string{"ALL"}, ReadOnlyRootfs: true, NoNewPrivs: true,
		Seccomp: &SeccompProfile{Type: SeccompLocalhost, Path: "/var/lib/podhost/seccomp/audit.json"},
	}
	pod := &SandboxSpec{UID: "u1", HostIPC: true, SharePID: true, Sysctls: map[string]string{"net.ipv4.ping_group_range": "0 0"}, Security: &Security{
		RunAsUser: &uid, SupplementalGroups: []int64{4000}, Privileged: true, Seccomp: &SeccompProfile{Type: SeccompRuntimeDefault},
	}}
	ns := &criapi.NamespaceOption{Network: criapi.NamespaceMode_POD, Pid: criapi.NamespaceMode_POD, Ipc: criapi.NamespaceMode_NODE}
	got := containerConfigToCRI(ContainerSpec{Name: "app", Security: sec}, "sb1", pod).GetLinux().GetSecurityContext()
	want := &criapi.LinuxContainerSecurityContext{
		NamespaceOptions: ns, RunAsUser: &criapi.Int64Value{Value: 1000}, RunAsGroup: &criapi.Int64Value{Value: 3000},
		SupplementalGroups: []int64{4000}, ReadonlyRootfs: true, NoNewPrivs: true,
		Capabilities: &criapi.Capability{AddCapabilities: []string{"NET_BIND_SERVICE"}, DropCapabilities: []string{"ALL"}},
		Seccomp:      &criapi.SecurityProfile{ProfileType: criapi.SecurityProfile_Localhost, LocalhostRef: "/var/lib/podhost/seccomp/audit.json"},
		MaskedPaths:  defaultMaskedPaths, ReadonlyPaths: defaultReadonlyPaths,
	}
	if !proto.Equal(got, want) {
		t.Errorf("container: got %v; want %v", got, want)
	}
	sec.Privileged = true
	if got := containerConfigToCRI(ContainerSpec{Name: "app", Security: sec}, "sb1", pod).GetLinux().GetSecurityContext(); !got.GetPrivileged() || got.GetMaskedPaths() != nil {
		t.Errorf("privileged container: got %v; want privileged, nothing masked", got)
	}
	sb := sandboxConfigToCRI(*pod).GetLinux()
	wantSB := &criapi.LinuxPodSandboxConfig{Sysctls: map[string]string{"net.ipv4.ping_group_range": "0 0"}, SecurityContext: &criapi.LinuxSandboxSecurityContext{
		NamespaceOptions: ns, RunAsUser: &criapi.Int64Value{Value: 1000}, SupplementalGroups: []int64{4000}, Privileged: true,
		Seccomp: &criapi.SecurityProfile{ProfileType: criapi.SecurityProfile_RuntimeDefault},
	}}
	if !proto.Equal(sb, wantSB) {
		t.Errorf("sandbox: got %v; want %v", sb, wantSB)
	}
}

func TestSecurityFromProto(t *testing.T) {
	uid := int64(7)
	got := securityFromProto(&runtimev1.SecurityContext{RunAsUser: &uid, NoNewPrivs: true, AddCapabilities: []string{"CHOWN"},
		Seccomp: &runtimev1.SecurityProfile{ProfileType: runtimev1.SecurityProfile_PROFILE_TYPE_UNCONFINED}})
	if got.RunAsUser == nil || *got.RunAsUser != 7 || !got.NoNewPrivs || !slices.Equal(got.AddCaps, []string{"CHOWN"}) || got.Seccomp.Type != SeccompUnconfined {
		t.Errorf("securityFromProto: %+v", got)
	}
	if securityFromProto(nil) != nil {
		t.Error("no security context: want nil, the runtime's defaults")
	}
}

func TestContainerStatusFromCRI(t *testing.T) {
	tests := []struct {
		name                          string
		started, finished, wantFinish int64
	}{
		{"in order", 10, 20, 20},
		{"exited before its start was stamped", 20, 19, 20},
		{"running", 10, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := containerStatusFromCRI(&criapi.ContainerStatus{
				Id: "c1", State: criapi.ContainerState_CONTAINER_EXITED, StartedAt: tt.started, FinishedAt: tt.finished,
				Labels: map[string]string{"x": "y", labelSandboxID: "sb1", labelPodUID: "u1"},
			})
			if c.FinishedAt != tt.wantFinish || c.SandboxID != "sb1" || c.State != ContainerExited || len(c.Labels) != 1 || c.Labels["x"] != "y" {
				t.Errorf("got %+v; want finished %d, sandbox sb1, exited, labels {x: y}", c, tt.wantFinish)
			}
		})
	}
}

func TestFiltersToCRI(t *testing.T) {
	sel := map[string]string{"a": "b"}
	if got, want := sandboxFilterToCRI(SandboxFilter{ID: "s1", State: SandboxNotReady, Labels: sel}), (&criapi.PodSandboxFilter{Id: "s1", State: &criapi.PodSandboxStateValue{State: criapi.PodSandboxState_SANDBOX_NOTREADY}, LabelSelector: sel}); !proto.Equal(got, want) {
		t.Errorf("sandbox filter: got %v; want %v", got, want)
	}
	if got := sandboxFilterToCRI(SandboxFilter{}); got.GetState() != nil {
		t.Errorf("sandbox filter of any state: got %v", got.GetState())
	}
	for state, want := range map[ContainerState]criapi.ContainerState{
		ContainerCreated: criapi.ContainerState_CONTAINER_CREATED, ContainerRunning: criapi.ContainerState_CONTAINER_RUNNING,
		ContainerExited: criapi.ContainerState_CONTAINER_EXITED, ContainerUnknown: criapi.ContainerState_CONTAINER_UNKNOWN,
	} {
		got := containerFilterToCRI(ContainerFilter{ID: "c1", SandboxID: "s1", State: state})
		if got.GetState().GetState() != want || got.GetId() != "c1" || got.GetPodSandboxId() != "s1" {
			t.Errorf("container filter %v: got %v; want state %v", state, got, want)
		}
		if back := containerStateFromCRI(want); back != state {
			t.Errorf("containerStateFromCRI(%v): got %v; want %v", want, back, state)
		}
	}
	if got := containerFilterToCRI(ContainerFilter{}); got.GetState() != nil {
		t.Errorf("container filter of any state: got %v", got.GetState())
	}
}

func TestCheckLabels(t *testing.T) {
	if err := checkLabels(map[string]string{"podhost.io/pod-uid": "u"}); err != nil {
		t.Errorf("host labels: got %v", err)
	}
	if err := checkLabels(map[string]string{labelSandboxID: "x"}); !errors.Is(err, errInvalid) {
		t.Errorf("a label with the plugin's prefix: got %v; want errInvalid", err)
	}
	if got := hostLabels(nil); got != nil {
		t.Errorf("hostLabels(nil): got %v", got)
	}
}

func TestContainerSpecFromProtoDevices(t *testing.T) {
	got := containerSpecFromProto(&runtimev1.ContainerConfig{Devices: []*runtimev1.Device{
		{ContainerPath: "/dev/xvda", HostPath: "/host/disk", Permissions: "rw"},
		{ContainerPath: "/dev/xvdb", HostPath: "/host/other"},
	}})
	want := []Device{{ContainerPath: "/dev/xvda", HostPath: "/host/disk", Permissions: "rw"}, {ContainerPath: "/dev/xvdb", HostPath: "/host/other"}}
	if !slices.Equal(got.Devices, want) {
		t.Errorf("devices %+v; want %+v", got.Devices, want)
	}
}

// TestContainerSpecFromProtoMounts: each propagation of the contract
// becomes the plugin's of the same meaning.
func TestContainerSpecFromProtoMounts(t *testing.T) {
	got := containerSpecFromProto(&runtimev1.ContainerConfig{Mounts: []*runtimev1.Mount{
		{ContainerPath: "/a", HostPath: "/h/a", Readonly: true},
		{ContainerPath: "/b", HostPath: "/h/b", Propagation: runtimev1.MountPropagation_MOUNT_PROPAGATION_HOST_TO_CONTAINER},
		{ContainerPath: "/c", HostPath: "/h/c", Propagation: runtimev1.MountPropagation_MOUNT_PROPAGATION_BIDIRECTIONAL},
	}})
	want := []Mount{{ContainerPath: "/a", HostPath: "/h/a", ReadOnly: true},
		{ContainerPath: "/b", HostPath: "/h/b", Propagation: PropagationHostToContainer},
		{ContainerPath: "/c", HostPath: "/h/c", Propagation: PropagationBidirectional}}
	if !slices.Equal(got.Mounts, want) {
		t.Errorf("mounts %+v; want %+v", got.Mounts, want)
	}
}

// TestTargetNamespace: an ephemeral container aimed at another joins its
// PID namespace where it would have its own; a pod that shares one or uses
// the node's keeps that.
func TestTargetNamespace(t *testing.T) {
	for _, tc := range []struct {
		name       string
		pod        SandboxSpec
		target     string
		wantPid    criapi.NamespaceMode
		wantTarget string
	}{
		{"no target", SandboxSpec{}, "", criapi.NamespaceMode_CONTAINER, ""},
		{"target", SandboxSpec{}, "c1", criapi.NamespaceMode_TARGET, "c1"},
		{"target in a shared namespace", SandboxSpec{SharePID: true}, "c1", criapi.NamespaceMode_POD, ""},
		{"target with the node's", SandboxSpec{HostPID: true}, "c1", criapi.NamespaceMode_NODE, ""},
	} {
		spec := containerSpecFromProto(&runtimev1.ContainerConfig{Metadata: &runtimev1.ContainerMetadata{Name: "dbg"}, TargetContainerId: tc.target})
		ns := containerConfigToCRI(spec, "sb1", &tc.pod).GetLinux().GetSecurityContext().GetNamespaceOptions()
		if ns.GetPid() != tc.wantPid || ns.GetTargetId() != tc.wantTarget {
			t.Errorf("%s: pid %v target %q; want %v %q", tc.name, ns.GetPid(), ns.GetTargetId(), tc.wantPid, tc.wantTarget)
		}
	}
}
