package runtimemanager

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// The pod's /etc/hosts, as the kubelet manages it: every container of a pod
// gets the same file, <root>/pods/<uid>/etc-hosts (podFilesDir, removed
// with the pod by RemovePod), written before each container is created and
// bind-mounted over /etc/hosts. A pod on the
// pod network gets a file of its own: the loopback and IPv6 boilerplate,
// its IP with its hostname (and its FQDN when it has a subdomain), then
// its hostAliases. A pod on the node's network gets the node's /etc/hosts
// under a header of its own, then its hostAliases. A container that mounts
// a volume at /etc/hosts keeps it, and a pod on the pod network without an
// IP yet gets no file (the runtime's default stays), as with the kubelet.

const (
	etcHostsPath     = "/etc/hosts"
	etcHostsFileName = "etc-hosts"
	// The headers the kubelet writes; the upstream e2e suite tells a
	// managed file by the first.
	managedHostsHeader            = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderHostNetwork = "# Kubernetes-managed hosts file (host network).\n"
)

// nodeHostsFile is the node's hosts file, which pods on the node's
// network see (a variable for tests).
var nodeHostsFile = "/etc/hosts"

// etcHostsMount writes the pod's hosts file and returns its mount for
// container c, or nil when c gets none.
func (m *Manager) etcHostsMount(pod *v1.Pod, c *v1.Container, podIP string) (*runtimev1.Mount, error) {
	if !pod.Spec.HostNetwork && podIP == "" {
		return nil, nil
	}
	for _, vm := range c.VolumeMounts {
		if filepath.Clean(vm.MountPath) == etcHostsPath {
			return nil, nil
		}
	}
	var content []byte
	if pod.Spec.HostNetwork {
		node, err := os.ReadFile(nodeHostsFile)
		if err != nil {
			return nil, fmt.Errorf("reading the node's hosts file for a pod on the node's network: %w", err)
		}
		content = hostNetworkHosts(node, pod.Spec.HostAliases)
	} else {
		content = podHosts(podIP, podHostname(pod), m.podDomain(pod), pod.Spec.HostAliases)
	}
	dir, err := podFilesDir(m.logRoot, pod.UID)
	if err != nil {
		return nil, fmt.Errorf("writing the pod's hosts file: %w", err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("writing the pod's hosts file: %w", err)
	}
	path := filepath.Join(dir, etcHostsFileName)
	if err := writeFileAtomic(path, content, 0o644); err != nil {
		return nil, fmt.Errorf("writing the pod's hosts file: %w", err)
	}
	return &runtimev1.Mount{ContainerPath: etcHostsPath, HostPath: path}, nil
}

// podDomain is the domain of the pod's FQDN:
// <subdomain>.<namespace>.svc.<cluster domain>, or "" without a subdomain
// or a cluster domain, or with a hostnameOverride (the kubelet's: the
// override is the whole name).
func (m *Manager) podDomain(pod *v1.Pod) string {
	if pod.Spec.Subdomain == "" || m.opts.ClusterDomain == "" || pod.Spec.HostnameOverride != nil {
		return ""
	}
	return pod.Spec.Subdomain + "." + pod.Namespace + ".svc." + m.opts.ClusterDomain
}

// podHosts is the hosts file of a pod on the pod network.
func podHosts(ip, hostname, domain string, aliases []v1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeader)
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	if domain != "" {
		fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
	} else {
		fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
	}
	writeHostAliases(&b, aliases)
	return b.Bytes()
}

// hostNetworkHosts is the hosts file of a pod on the node's network.
func hostNetworkHosts(node []byte, aliases []v1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeaderHostNetwork)
	b.Write(node)
	writeHostAliases(&b, aliases)
	return b.Bytes()
}

func writeHostAliases(b *bytes.Buffer, aliases []v1.HostAlias) {
	if len(aliases) == 0 {
		return
	}
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
}

// writeFileAtomic replaces path with data: a container that has the file
// mounted keeps reading the old one whole (a bind mount holds the inode)
// and a new container reads the new one whole.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), mode)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
