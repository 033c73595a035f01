package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/podhost/podhost/host/config"
	"github.com/podhost/podhost/host/node"
)

// The client's request rate towards the API server: the kubelet's
// defaults (kubeAPIQPS, kubeAPIBurst), since client-go's own (5, 10) would
// throttle the status writes of a few dozen pods.
const (
	kubeQPS   = 50
	kubeBurst = 100
)

// nodeNameOf is the config's nodeName, else the machine's host name in
// lower case, as the kubelet takes it.
func nodeNameOf(cfg *config.HostConfig) (string, error) {
	if cfg.NodeName != "" {
		return cfg.NodeName, nil
	}
	name, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("reading the node name: %w", err)
	}
	return strings.ToLower(name), nil
}

// kubeConfig builds the node's Kubernetes mode from the kubernetes section:
// a client from the kubeconfig, and the node's addresses
// (kubernetes.nodeIP, else the local address towards the API server).
// Without the section it returns the zero KubeConfig (local mode) and the
// machine's address, if one is found (standaloneNodeIPs).
func kubeConfig(ctx context.Context, cfg *config.HostConfig) (node.KubeConfig, []string, error) {
	k := cfg.Kubernetes
	if k == nil {
		return node.KubeConfig{}, standaloneNodeIPs(), nil
	}
	kc, ip, err := kubeClient(ctx, k)
	if err != nil {
		return node.KubeConfig{}, nil, err
	}
	return kc, []string{ip}, nil
}

// standaloneNodeIPs is the machine's address outside Kubernetes mode: the
// address of the interface of the default route, which the kubelet also
// falls back to. None when there is no default route.
func standaloneNodeIPs() []string {
	ip, err := utilnet.ChooseHostInterface()
	if err != nil || ip == nil {
		return nil
	}
	return []string{ip.String()}
}

// kubeClient is kubeConfig's client and node address for the section k.
func kubeClient(ctx context.Context, k *config.Kubernetes) (node.KubeConfig, string, error) {
	rest, err := clientcmd.BuildConfigFromFlags("", k.Kubeconfig)
	if err != nil {
		return node.KubeConfig{}, "", fmt.Errorf("kubernetes.kubeconfig: reading %s: %w", k.Kubeconfig, err)
	}
	server, err := url.Parse(rest.Host)
	if err != nil || server.Host == "" {
		return node.KubeConfig{}, "", fmt.Errorf("kubernetes.kubeconfig: %s: server %q is not a URL", k.Kubeconfig, rest.Host)
	}
	if (rest.Insecure || server.Scheme == "http") && !k.AllowInsecureSkipTLSVerify {
		what := "sets insecure-skip-tls-verify"
		if server.Scheme == "http" {
			what = "names a server without TLS (" + rest.Host + ")"
		}
		return node.KubeConfig{}, "", fmt.Errorf("kubernetes.kubeconfig: %s %s: the API server would not be verified; "+
			"set kubernetes.allowInsecureSkipTLSVerify: true to allow it", k.Kubeconfig, what)
	}
	rest.QPS, rest.Burst = kubeQPS, kubeBurst
	rest.UserAgent = "podhost/" + version
	client, err := kubernetes.NewForConfig(rest)
	if err != nil {
		return node.KubeConfig{}, "", fmt.Errorf("kubernetes.kubeconfig: %s: %w", k.Kubeconfig, err)
	}
	ip := k.NodeIP
	if ip == "" {
		if ip, err = localAddressTowards(ctx, server); err != nil {
			return node.KubeConfig{}, "", fmt.Errorf("kubernetes.nodeIP is not set and finding the address towards the API server failed: %w", err)
		}
	}
	kc := node.KubeConfig{Client: client, Labels: k.NodeLabels}
	if sv := k.Server; sv != nil {
		kc.Server = &node.KubeServer{Addr: sv.Address, CertFile: sv.TLSCertFile, KeyFile: sv.TLSPrivateKeyFile, ClientCAFile: sv.ClientCAFile}
	}
	return kc, ip, nil
}

// localAddressTowards returns the local address the host reaches server
// from (a UDP "connection" sends nothing).
func localAddressTowards(ctx context.Context, server *url.URL) (string, error) {
	port := server.Port()
	if port == "" {
		port = "443"
		if server.Scheme == "http" {
			port = "80"
		}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", net.JoinHostPort(server.Hostname(), port))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	addr, ok := conn.LocalAddr().(*net.UDPAddr)
	if !ok {
		return "", fmt.Errorf("unexpected local address %v", conn.LocalAddr())
	}
	return addr.IP.String(), nil
}
