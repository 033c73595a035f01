package podvalidate

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestValidateSecurity(t *testing.T) {
	app := func(p *v1.Pod) *v1.SecurityContext {
		if p.Spec.Containers[0].SecurityContext == nil {
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{}
		}
		return p.Spec.Containers[0].SecurityContext
	}
	pod := func(p *v1.Pod) *v1.PodSecurityContext {
		if p.Spec.SecurityContext == nil {
			p.Spec.SecurityContext = &v1.PodSecurityContext{}
		}
		return p.Spec.SecurityContext
	}
	runValidateCases(t, []validateCase{
		{"all honoured", func(p *v1.Pod) {
			ps := pod(p)
			ps.RunAsUser, ps.RunAsGroup, ps.RunAsNonRoot = ptr.To[int64](1000), ptr.To[int64](3000), ptr.To(true)
			ps.SupplementalGroups = []int64{4000}
			ps.Sysctls = []v1.Sysctl{{Name: "net.ipv4.ping_group_range", Value: "0 0"}, {Name: "kernel/shm_rmid_forced", Value: "1"}}
			ps.SeccompProfile = &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}
			sc := app(p)
			sc.Capabilities = &v1.Capabilities{Drop: []v1.Capability{"ALL"}, Add: []v1.Capability{"NET_BIND_SERVICE", "chown"}}
			sc.ReadOnlyRootFilesystem, sc.AllowPrivilegeEscalation = ptr.To(true), ptr.To(false)
			sc.SeccompProfile = &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("profiles/audit.json")}
			sc.ProcMount = ptr.To(v1.DefaultProcMount)
		}, nil},
		{"negative uid", func(p *v1.Pod) { app(p).RunAsUser = ptr.To[int64](-1) }, []string{"spec.containers[0].securityContext.runAsUser: Invalid value"}},
		{"pod gid too big", func(p *v1.Pod) { pod(p).RunAsGroup = ptr.To[int64](1 << 32) }, []string{"spec.securityContext.runAsGroup: Invalid value"}},
		{"negative supplemental group", func(p *v1.Pod) { pod(p).SupplementalGroups = []int64{-5} }, []string{"spec.securityContext.supplementalGroups[0]: Invalid value"}},
		{"unknown capability", func(p *v1.Pod) {
			app(p).Capabilities = &v1.Capabilities{Add: []v1.Capability{"NET_ADMIN", "FLY"}}
		}, []string{"spec.containers[0].securityContext.capabilities.add[1]: Invalid value"}},
		{"CAP_ prefix", func(p *v1.Pod) {
			app(p).Capabilities = &v1.Capabilities{Drop: []v1.Capability{"CAP_NET_RAW"}}
		}, []string{"spec.containers[0].securityContext.capabilities.drop[0]: Invalid value"}},
		{"privileged without escalation", func(p *v1.Pod) {
			sc := app(p)
			sc.Privileged, sc.AllowPrivilegeEscalation = ptr.To(true), ptr.To(false)
		}, []string{"spec.containers[0].securityContext.allowPrivilegeEscalation: Invalid value"}},
		{"SYS_ADMIN without escalation", func(p *v1.Pod) {
			sc := app(p)
			sc.Capabilities, sc.AllowPrivilegeEscalation = &v1.Capabilities{Add: []v1.Capability{"SYS_ADMIN"}}, ptr.To(false)
		}, []string{"spec.containers[0].securityContext.allowPrivilegeEscalation: Invalid value"}},
		{"seccomp type", func(p *v1.Pod) { pod(p).SeccompProfile = &v1.SeccompProfile{Type: "Strict"} }, []string{"spec.securityContext.seccompProfile.type: Unsupported value"}},
		{"seccomp localhost without file", func(p *v1.Pod) {
			app(p).SeccompProfile = &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost}
		}, []string{"spec.containers[0].securityContext.seccompProfile.localhostProfile: Required value"}},
		{"seccomp localhost escapes", func(p *v1.Pod) {
			app(p).SeccompProfile = &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("../../etc/x.json")}
		}, []string{"spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value"}},
		{"seccomp localhost absolute", func(p *v1.Pod) {
			app(p).SeccompProfile = &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("/etc/x.json")}
		}, []string{"spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value"}},
		{"sysctl name", func(p *v1.Pod) { pod(p).Sysctls = []v1.Sysctl{{Name: "Net..x", Value: "1"}} }, []string{"spec.securityContext.sysctls[0].name: Invalid value"}},
		{"sysctl twice", func(p *v1.Pod) {
			pod(p).Sysctls = []v1.Sysctl{{Name: "net.ipv4.ping_group_range"}, {Name: "net/ipv4/ping_group_range"}}
		}, []string{"spec.securityContext.sysctls[1].name: Duplicate value"}},
		{"procMount unmasked", func(p *v1.Pod) { app(p).ProcMount = ptr.To(v1.UnmaskedProcMount) }, []string{"spec.containers[0].securityContext.procMount: Forbidden"}},
		{"appArmor", func(p *v1.Pod) {
			app(p).AppArmorProfile = &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}
		}, []string{"spec.containers[0].securityContext.appArmorProfile: Forbidden"}},
		{"supplementalGroupsPolicy Strict", func(p *v1.Pod) {
			pod(p).SupplementalGroupsPolicy = ptr.To(v1.SupplementalGroupsPolicyStrict)
		}, []string{"spec.securityContext.supplementalGroupsPolicy: Forbidden"}},
		{"supplementalGroupsPolicy Merge", func(p *v1.Pod) {
			pod(p).SupplementalGroupsPolicy = ptr.To(v1.SupplementalGroupsPolicyMerge)
		}, nil},
	})
}

func TestSysctlDotted(t *testing.T) {
	for in, want := range map[string]string{
		"net.ipv4.ping_group_range":         "net.ipv4.ping_group_range",
		"net/ipv4/conf/eth0.100/forwarding": "net.ipv4.conf.eth0/100.forwarding",
		"kernel.shm_rmid_forced":            "kernel.shm_rmid_forced",
		"kernel":                            "kernel",
	} {
		if got := SysctlDotted(in); got != want {
			t.Errorf("SysctlDotted(%q) = %q, want %q", in, got, want)
		}
	}
}
