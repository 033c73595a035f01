package admission

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestAdmitSecurity(t *testing.T) {
	profiles := Lookups{SeccompProfile: func(name string) error {
		if name == "audit.json" {
			return nil
		}
		return errors.New("no such profile")
	}}
	sysctlPod := func(hostNet bool, names ...string) *v1.Pod {
		p := &v1.Pod{Spec: v1.PodSpec{HostNetwork: hostNet, SecurityContext: &v1.PodSecurityContext{}, Containers: []v1.Container{{Name: "app"}}}}
		for _, n := range names {
			p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, v1.Sysctl{Name: n, Value: "1"})
		}
		return p
	}
	seccompPod := func(name string) *v1.Pod {
		return &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", SecurityContext: &v1.SecurityContext{
			SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To(name)}}}}}}
	}
	node := Node{AllowedUnsafeSysctls: []string{"net.core.*", "kernel.msgmax"}}
	tests := []struct {
		name   string
		pod    *v1.Pod
		reason string
		inMsg  string
	}{
		{"safe sysctls", sysctlPod(false, "net.ipv4.ping_group_range", "kernel/shm_rmid_forced"), "", ""},
		{"unsafe allowed by prefix", sysctlPod(false, "net.core.somaxconn"), "", ""},
		{"unsafe allowed by name", sysctlPod(false, "kernel.msgmax"), "", ""},
		{"unsafe not allowed", sysctlPod(false, "net.ipv4.ip_forward"), ReasonSysctlForbidden, "spec.securityContext.sysctls[0]: net.ipv4.ip_forward"},
		{"not namespaced", sysctlPod(false, "vm.swappiness"), ReasonSysctlForbidden, "not namespaced"},
		{"net sysctl on the node's network", sysctlPod(true, "net.ipv4.ping_group_range"), ReasonSysctlForbidden, "node's network"},
		{"seccomp profile present", seccompPod("audit.json"), "", ""},
		{"seccomp profile missing", seccompPod("nope.json"), ReasonSeccompProfile, `spec.containers[0].securityContext.seccompProfile.localhostProfile "nope.json"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Admit(node, nil, tt.pod, profiles)
			if r.Reason != tt.reason || !strings.Contains(r.Message, tt.inMsg) || r.Admit != (tt.reason == "") {
				t.Errorf("Admit: %+v; want reason %q with %q", r, tt.reason, tt.inMsg)
			}
		})
	}
}
