package runtimemanager

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// maxHostnameLen is the longest hostname a sandbox gets (a DNS label).
const maxHostnameLen = 63

// sandboxConfig is the config of the pod's sandbox with the given attempt.
func (m *Manager) sandboxConfig(pod *v1.Pod, attempt uint32) *runtimev1.SandboxConfig {
	cfg := &runtimev1.SandboxConfig{
		Metadata: &runtimev1.SandboxMetadata{
			Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt,
		},
		LogDirectory: PodLogDir(m.logRoot, pod.Namespace, pod.Name, pod.UID),
		Labels:       podLabels(pod),
		Annotations:  sandboxAnnotations(pod),
		HostNetwork:  pod.Spec.HostNetwork,
		HostPid:      pod.Spec.HostPID,
		HostIpc:      pod.Spec.HostIPC,
		Dns:          m.dnsConfig(pod),
		Sysctls:      sandboxSysctls(pod),
		Security:     m.sandboxSecurity(pod),
		PodCgroup:    podCgroup(pod),

		ShareProcessNamespace: pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace,
	}
	if !pod.Spec.HostNetwork {
		// A FQDN too long fails createSandbox before this config is used.
		cfg.Hostname, _ = m.kernelHostname(pod)
	}
	return cfg
}

// maxFQDNLen is the longest FQDN a sandbox's hostname may be: the
// kernel's nodename field holds 64 characters.
const maxFQDNLen = 64

// kernelHostname is the sandbox's hostname: podHostname, or with
// setHostnameAsFQDN true and a pod domain (podDomain: a subdomain, the
// host's cluster domain and no hostnameOverride) the FQDN
// <hostname>.<domain>, as the kubelet; a FQDN over 64 characters is an
// error in the kubelet's words.
func (m *Manager) kernelHostname(pod *v1.Pod) (string, error) {
	h := podHostname(pod)
	domain := m.podDomain(pod)
	if domain == "" || pod.Spec.SetHostnameAsFQDN == nil || !*pod.Spec.SetHostnameAsFQDN {
		return h, nil
	}
	fqdn := h + "." + domain
	if len(fqdn) > maxFQDNLen {
		return "", fmt.Errorf("failed to construct FQDN from pod hostname and cluster domain, FQDN %s is too long (%d characters is the max, %d characters requested)", fqdn, maxFQDNLen, len(fqdn))
	}
	return fqdn, nil
}

// podHostname is spec.hostnameOverride, else spec.hostname, else the pod
// name, cut to 63 characters, as the kubelet's.
func podHostname(pod *v1.Pod) string {
	h := pod.Spec.Hostname
	if h == "" {
		h = pod.Name
	}
	if o := pod.Spec.HostnameOverride; o != nil {
		h = *o
	}
	if len(h) > maxHostnameLen {
		h = strings.TrimRight(h[:maxHostnameLen], "-.")
	}
	return h
}

// ndotsClusterFirst is the ndots option of cluster-first DNS.
const ndotsClusterFirst = "ndots:5"

// dnsConfig maps the pod's DNS policy:
//   - None: only spec.dnsConfig;
//   - ClusterFirst (the default) and, with hostNetwork,
//     ClusterFirstWithHostNet: the cluster DNS servers and search domains
//     when the Manager has ClusterDNS, else as Default;
//   - Default: the node's resolv.conf (nil, the runtime's default, when the
//     Manager was given none).
//
// spec.dnsConfig is merged into every policy: its servers and searches are
// appended (without duplicates), its options replace options of the same
// name.
func (m *Manager) dnsConfig(pod *v1.Pod) *runtimev1.DNSConfig {
	var base *runtimev1.DNSConfig
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = v1.DNSClusterFirst
	}
	clusterFirst := policy == v1.DNSClusterFirstWithHostNet ||
		policy == v1.DNSClusterFirst && !pod.Spec.HostNetwork
	switch {
	case policy == v1.DNSNone:
		base = &runtimev1.DNSConfig{}
	case clusterFirst && len(m.opts.ClusterDNS) > 0:
		base = &runtimev1.DNSConfig{Servers: slices.Clone(m.opts.ClusterDNS), Options: []string{ndotsClusterFirst}}
		if d := m.opts.ClusterDomain; d != "" {
			base.Searches = []string{pod.Namespace + ".svc." + d, "svc." + d, d}
		}
		if node := m.opts.NodeResolvConf; node != nil {
			base.Searches = appendNew(base.Searches, node.Searches...)
		}
	case m.opts.NodeResolvConf != nil:
		n := m.opts.NodeResolvConf
		base = &runtimev1.DNSConfig{Servers: slices.Clone(n.Servers), Searches: slices.Clone(n.Searches), Options: slices.Clone(n.Options)}
	}
	pc := pod.Spec.DNSConfig
	if pc == nil {
		return base
	}
	if base == nil {
		base = &runtimev1.DNSConfig{}
	}
	base.Servers = appendNew(base.Servers, pc.Nameservers...)
	base.Searches = appendNew(base.Searches, pc.Searches...)
	for _, o := range pc.Options {
		opt := o.Name
		if o.Value != nil {
			opt += ":" + *o.Value
		}
		base.Options = slices.DeleteFunc(base.Options, func(s string) bool {
			name, _, _ := strings.Cut(s, ":")
			return name == o.Name
		})
		base.Options = append(base.Options, opt)
	}
	return base
}

// appendNew appends the values not yet in s.
func appendNew(s []string, values ...string) []string {
	for _, v := range values {
		if !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	return s
}

// ResolvConf is the DNS part of a resolv.conf file.
type ResolvConf struct {
	Servers, Searches, Options []string
}

// ParseResolvConf reads nameserver, search (and domain) and options lines
// of a resolv.conf file; other lines and comments are ignored.
func ParseResolvConf(data []byte) ResolvConf {
	var rc ResolvConf
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line, _, _ = strings.Cut(line, ";")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			rc.Servers = append(rc.Servers, f[1])
		case "search", "domain":
			rc.Searches = f[1:]
		case "options":
			rc.Options = appendNew(rc.Options, f[1:]...)
		}
	}
	return rc
}
