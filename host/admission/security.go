package admission

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/sources/podvalidate"
)

// Reasons of the security checks.
const (
	// ReasonSysctlForbidden is the kubelet's reason for a sysctl the node
	// does not allow.
	ReasonSysctlForbidden = "SysctlForbidden"
	// ReasonSeccompProfile: a Localhost seccomp profile the node does
	// not have.
	ReasonSeccompProfile = "SeccompProfileNotFound"
)

// safeSysctls are the sysctls every pod may set: namespaced, and unable
// to affect other pods or the node (the kubelet's safe set).
var safeSysctls = map[string]bool{
	"kernel.shm_rmid_forced":              true,
	"net.ipv4.ip_local_port_range":        true,
	"net.ipv4.tcp_syncookies":             true,
	"net.ipv4.ping_group_range":           true,
	"net.ipv4.ip_unprivileged_port_start": true,
	"net.ipv4.ip_local_reserved_ports":    true,
	"net.ipv4.tcp_keepalive_time":         true,
	"net.ipv4.tcp_fin_timeout":            true,
	"net.ipv4.tcp_keepalive_intvl":        true,
	"net.ipv4.tcp_keepalive_probes":       true,
	"net.ipv4.tcp_rmem":                   true,
	"net.ipv4.tcp_wmem":                   true,
}

// sysctlNamespace is the namespace a sysctl lives in: "ipc", "net", or
// "" for one that is not namespaced (it would change the node).
func sysctlNamespace(name string) string {
	switch {
	case strings.HasPrefix(name, "net."):
		return "net"
	case name == "kernel.sem", strings.HasPrefix(name, "kernel.shm"), strings.HasPrefix(name, "kernel.msg"), strings.HasPrefix(name, "fs.mqueue."):
		return "ipc"
	}
	return ""
}

// allowedUnsafe reports whether the node's allowedUnsafeSysctls name the
// sysctl, exactly or by a prefix ending in "*".
func allowedUnsafe(name string, allowed []string) bool {
	for _, a := range allowed {
		if p, ok := strings.CutSuffix(podvalidate.SysctlDotted(a), "*"); ok && strings.HasPrefix(name, p) || a == name {
			return true
		}
	}
	return false
}

// checkSysctls admits the pod's sysctls: the safe set, and others the
// node allows, as long as they are namespaced and the pod does not share
// that namespace with the node.
func checkSysctls(node Node, pod *v1.Pod) Result {
	ps := pod.Spec.SecurityContext
	if ps == nil {
		return admitted
	}
	for i, s := range ps.Sysctls {
		name := podvalidate.SysctlDotted(s.Name)
		where := fmt.Sprintf("spec.securityContext.sysctls[%d]: %s", i, s.Name)
		ns := sysctlNamespace(name)
		switch {
		case ns == "":
			return reject(ReasonSysctlForbidden, "%s is not namespaced: a pod may not set it", where)
		case ns == "net" && pod.Spec.HostNetwork:
			return reject(ReasonSysctlForbidden, "%s: a pod on the node's network may not set net.* sysctls", where)
		case ns == "ipc" && pod.Spec.HostIPC:
			return reject(ReasonSysctlForbidden, "%s: a pod in the node's IPC namespace may not set IPC sysctls", where)
		case !safeSysctls[name] && !allowedUnsafe(name, node.AllowedUnsafeSysctls):
			return reject(ReasonSysctlForbidden, "%s is not a safe sysctl and the node does not allow it (allowedUnsafeSysctls)", where)
		}
	}
	return admitted
}

// checkSeccomp admits Localhost seccomp profiles the node has.
func checkSeccomp(pod *v1.Pod, look Lookups) Result {
	if look.SeccompProfile == nil {
		return admitted
	}
	check := func(p *v1.SeccompProfile, where string) Result {
		if p == nil || p.Type != v1.SeccompProfileTypeLocalhost || p.LocalhostProfile == nil {
			return admitted
		}
		if err := look.SeccompProfile(*p.LocalhostProfile); err != nil {
			return reject(ReasonSeccompProfile, "%s.seccompProfile.localhostProfile %q: %v", where, *p.LocalhostProfile, err)
		}
		return admitted
	}
	if ps := pod.Spec.SecurityContext; ps != nil {
		if r := check(ps.SeccompProfile, "spec.securityContext"); !r.Admit {
			return r
		}
	}
	for _, list := range []struct {
		name string
		cs   []v1.Container
	}{{"initContainers", pod.Spec.InitContainers}, {"containers", pod.Spec.Containers}} {
		for i, c := range list.cs {
			if c.SecurityContext == nil {
				continue
			}
			if r := check(c.SecurityContext.SeccompProfile, fmt.Sprintf("spec.%s[%d].securityContext", list.name, i)); !r.Admit {
				return r
			}
		}
	}
	return admitted
}
