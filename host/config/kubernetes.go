package config

import (
	"errors"
	"io/fs"
	"net"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Kubernetes is the kubernetes section: the API server the host joins as a
// node, watching the pods bound to it and reporting their status there.
type Kubernetes struct {
	// Kubeconfig is the file with the API server's address and the node's
	// credentials (absolute; required). TLS verification is on: a
	// kubeconfig that disables it, or names an http:// server, is refused
	// unless AllowInsecureSkipTLSVerify says otherwise.
	Kubeconfig string `yaml:"kubeconfig"`
	// AllowInsecureSkipTLSVerify allows a kubeconfig that sets
	// insecure-skip-tls-verify or names an http:// server. Both must be
	// stated, the kubeconfig's setting and this one.
	AllowInsecureSkipTLSVerify bool `yaml:"allowInsecureSkipTLSVerify"`
	// NodeIP is the node's address, reported as the pod IP of
	// host-network pods. When left out, cmd/host uses the local address
	// it reaches the API server from.
	NodeIP string `yaml:"nodeIP"`
	// Server is the node's daemon endpoint, which the API server dials for
	// `kubectl logs`; left out, the node serves none.
	Server *KubeServer `yaml:"server"`
	// NodeLabels are set on the Node besides the kubelet's own labels; only
	// labels a node may set on itself (no node-restriction.kubernetes.io/).
	NodeLabels map[string]string `yaml:"nodeLabels"`
}

// KubeServer is the daemon endpoint: HTTPS with a certificate the API
// server trusts (its --kubelet-certificate-authority), accepting the API
// server's client certificate (signed by ClientCAFile) or a token that a
// TokenReview approves.
type KubeServer struct {
	// Address is host:port to listen on; the host part is the address the
	// node advertises (kubernetes.nodeIP) unless it listens on all.
	Address string `yaml:"address"`
	// TLSCertFile and TLSPrivateKeyFile are the serving certificate and
	// key (absolute, required).
	TLSCertFile       string `yaml:"tlsCertFile"`
	TLSPrivateKeyFile string `yaml:"tlsPrivateKeyFile"`
	// ClientCAFile holds the CA of the API server's client certificate
	// (absolute, required).
	ClientCAFile string `yaml:"clientCAFile"`
}

// checkKubernetes checks nodeName and the kubernetes section; with stat,
// also that the kubeconfig is a file.
func (c *HostConfig) checkKubernetes(p *problems, stat StatFunc) {
	line := c.meta.lineOf
	if c.NodeName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(c.NodeName) {
			p.add("nodeName", line("nodeName"), nil, "invalid node name %q: %s", c.NodeName, msg)
		}
	}
	k := c.Kubernetes
	if k == nil {
		if c.meta != nil && c.meta.nulls["kubernetes"] {
			p.add("kubernetes.kubeconfig", line("kubernetes"), nil, "required field is missing (leave kubernetes out to run without an API server)")
		}
		return
	}
	checkDir(p, "kubernetes.kubeconfig", line("kubernetes.kubeconfig"), k.Kubeconfig, true)
	if k.Kubeconfig != "" && stat != nil && !p.covered("kubernetes.kubeconfig") {
		switch fi, err := stat(k.Kubeconfig); {
		case errors.Is(err, fs.ErrNotExist):
			p.add("kubernetes.kubeconfig", line("kubernetes.kubeconfig"), err, "%s does not exist", k.Kubeconfig)
		case err != nil:
			p.add("kubernetes.kubeconfig", line("kubernetes.kubeconfig"), err, "cannot check %s: %v", k.Kubeconfig, err)
		case !fi.Mode().IsRegular():
			p.add("kubernetes.kubeconfig", line("kubernetes.kubeconfig"), nil, "%s is not a regular file", k.Kubeconfig)
		}
	}
	if k.NodeIP != "" && net.ParseIP(k.NodeIP) == nil {
		p.add("kubernetes.nodeIP", line("kubernetes.nodeIP"), nil, "want an IP address, got %q", k.NodeIP)
	}
	if s := k.Server; s != nil {
		const pre = "kubernetes.server."
		if _, port, err := net.SplitHostPort(s.Address); err != nil || port == "" {
			p.add(pre+"address", line(pre+"address"), nil, "want host:port, got %q", s.Address)
		}
		checkDir(p, pre+"tlsCertFile", line(pre+"tlsCertFile"), s.TLSCertFile, true)
		checkDir(p, pre+"tlsPrivateKeyFile", line(pre+"tlsPrivateKeyFile"), s.TLSPrivateKeyFile, true)
		checkDir(p, pre+"clientCAFile", line(pre+"clientCAFile"), s.ClientCAFile, true)
	}
	for key := range k.NodeLabels {
		path := "kubernetes.nodeLabels." + key
		for _, msg := range validation.IsQualifiedName(key) {
			p.add(path, line(path), nil, "invalid label key %q: %s", key, msg)
		}
	}
}
