package kubecluster

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// MetricsServerVersion is the release hack/metrics-server.sh builds.
const MetricsServerVersion = "v0.8.0"

// The user metrics-server authenticates as (a client certificate of the
// cluster's CA), and the names of its Service and APIService.
const (
	metricsServerUser    = "system:metrics-server"
	metricsServerName    = "metrics-server"
	metricsServerService = "metrics-server.kube-system.svc"
	metricsAPIService    = "v1beta1.metrics.k8s.io"
	frontProxyClientName = "front-proxy-client"
)

var apiServiceResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// checkMetricsServer fails when opts ask for metrics-server and its
// binary is missing, naming the command that builds it.
func (b Binaries) checkMetricsServer(opts Options) error {
	if !opts.MetricsServer {
		return nil
	}
	return checkExecutables("sh hack/metrics-server.sh (make kube-binaries)", b.MetricsServer)
}

// prepareAggregation turns on the API server's aggregation layer: a
// front-proxy CA of its own (not the client CA, so that no ordinary client
// certificate may assert a user in request headers), the client
// certificate the API server proxies with, the --requestheader-* flags
// extension API servers read back from
// kube-system/extension-apiserver-authentication, and aggregator routing,
// so that the API server dials an APIService's endpoint rather than its
// Service's cluster IP (no kube-proxy here).
func (c *Cluster) prepareAggregation() error {
	dir := filepath.Join(c.Dir, "front-proxy")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fp, err := newAuthority(dir)
	if err != nil {
		return err
	}
	cert, key, err := fp.issue(dir, frontProxyClientName, leaf{
		commonName: frontProxyClientName, usage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return err
	}
	c.apiArgs = append(c.apiArgs,
		"--requestheader-client-ca-file="+fp.File, "--requestheader-allowed-names="+frontProxyClientName,
		"--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file="+cert, "--proxy-client-key-file="+key,
		"--enable-aggregator-routing=true",
	)
	return nil
}

// startMetricsServer runs metrics-server as a process of the machine (there
// is no registry to pull its image from) on ip and a free port, as user
// system:metrics-server with the RBAC of upstream's manifests, verifying
// the nodes' serving certificates against the cluster's CA and reaching
// each node at its InternalIP and the port of its status; then registers
// it as APIService v1beta1.metrics.k8s.io behind Service
// kube-system/metrics-server, whose one EndpointSlice names ip, and waits
// until the API server reports the APIService available.
func (c *Cluster) startMetricsServer(ctx context.Context, ip net.IP) error {
	if ip == nil {
		var err error
		if ip, err = hostIP(); err != nil {
			return err
		}
	}
	if err := c.metricsServerRBAC(ctx); err != nil {
		return err
	}
	kubeconfig, err := c.metricsServerKubeconfig()
	if err != nil {
		return err
	}
	cert, key, err := c.ca.issue(c.Dir, metricsServerName+"-serving", leaf{
		commonName: metricsServerName, ips: []net.IP{ip},
		dnsNames: []string{metricsServerService, "metrics-server.kube-system", "metrics-server.kube-system.svc.cluster.local"},
		usage:    []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return err
	}
	port := freePortOn(ip)
	if port == 0 {
		return fmt.Errorf("no free port on %s for metrics-server", ip)
	}
	p, err := startProcess(metricsServerName, filepath.Join(c.Dir, metricsServerName+".log"), c.bins.MetricsServer,
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--bind-address="+ip.String(), "--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+cert, "--tls-private-key-file="+key,
		// The node registers its InternalIP and serves on the port of its
		// status (not 10250), with a certificate of the cluster's CA.
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-use-node-status-port",
		"--kubelet-certificate-authority="+c.CAFile,
		// The shortest resolution metrics-server accepts; it must be longer
		// than a scrape's timeout.
		"--metric-resolution=10s", "--kubelet-request-timeout=5s",
		"--v=2",
	)
	if err != nil {
		return err
	}
	c.components = append(c.components, p)
	// /livez, not /readyz: metrics-server is ready only once it has
	// scraped a node twice, and no node has joined yet.
	if err := c.waitHealthy(ctx, p, "https://"+net.JoinHostPort(ip.String(), strconv.Itoa(port))+"/livez"); err != nil {
		return err
	}
	if err := c.registerMetricsAPI(ctx, ip, port); err != nil {
		return err
	}
	return c.waitAPIServiceAvailable(ctx, p)
}

// metricsServerRBAC creates what upstream's manifests grant metrics-server
// (ClusterRole system:metrics-server: nodes/metrics get; pods and nodes
// get, list, watch; system:auth-delegator for delegated authentication and
// authorization; the extension-apiserver-authentication-reader Role in
// kube-system) and the aggregated reader role of the metrics API.
func (c *Cluster) metricsServerRBAC(ctx context.Context) error {
	rbac := c.Client.RbacV1()
	user := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: metricsServerUser}}
	_, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: metricsServerUser},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes/metrics"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating ClusterRole %s: %w", metricsServerUser, err)
	}
	_, err = rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "system:aggregated-metrics-reader", Labels: map[string]string{
			"rbac.authorization.k8s.io/aggregate-to-admin": "true", "rbac.authorization.k8s.io/aggregate-to-edit": "true",
			"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating ClusterRole system:aggregated-metrics-reader: %w", err)
	}
	for name, role := range map[string]string{metricsServerUser: metricsServerUser, "metrics-server:system:auth-delegator": "system:auth-delegator"} {
		_, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: user,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating ClusterRoleBinding %s: %w", name, err)
		}
	}
	_, err = rbac.RoleBindings("kube-system").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-server-auth-reader"}, Subjects: user,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating RoleBinding kube-system/metrics-server-auth-reader: %w", err)
	}
	return nil
}

// metricsServerKubeconfig writes the kubeconfig of system:metrics-server:
// a client certificate of the cluster's CA, which the nodes' servers
// accept as well (then review its access to nodes/metrics).
func (c *Cluster) metricsServerKubeconfig() (string, error) {
	cert, key, err := c.ca.issue(c.Dir, metricsServerName+"-client", leaf{
		commonName: metricsServerUser, usage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.Dir, metricsServerName+".kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: c.URL, CertificateAuthority: c.CAFile}
	cfg.AuthInfos[metricsServerUser] = &clientcmdapi.AuthInfo{ClientCertificate: cert, ClientKey: key}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: metricsServerUser}
	cfg.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return path, os.Chmod(path, 0o600)
}

// registerMetricsAPI creates Service kube-system/metrics-server (port 443
// to port), its EndpointSlice with ip (the API server resolves an
// APIService's Service through EndpointSlices under aggregator routing;
// no controller manager mirrors an Endpoints object here), and the
// APIService, verified against the cluster's CA.
func (c *Cluster) registerMetricsAPI(ctx context.Context, ip net.IP, port int) error {
	core := c.Client.CoreV1()
	_, err := core.Services("kube-system").Create(ctx, &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: metricsServerName},
		Spec: v1.ServiceSpec{Ports: []v1.ServicePort{{Name: "https", Port: 443, Protocol: v1.ProtocolTCP,
			TargetPort: intstr.FromInt32(int32(port))}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating Service kube-system/%s: %w", metricsServerName, err)
	}
	addrType := discoveryv1.AddressTypeIPv4
	if ip.To4() == nil {
		addrType = discoveryv1.AddressTypeIPv6
	}
	_, err = c.Client.DiscoveryV1().EndpointSlices("kube-system").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: metricsServerName, Labels: map[string]string{
			discoveryv1.LabelServiceName: metricsServerName, discoveryv1.LabelManagedBy: "kubecluster.podhost"}},
		AddressType: addrType,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip.String()}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(port)), Protocol: ptr.To(v1.ProtocolTCP)}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating EndpointSlice kube-system/%s: %w", metricsServerName, err)
	}
	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": metricsAPIService},
		"spec": map[string]any{
			"group": "metrics.k8s.io", "version": "v1beta1",
			"service":  map[string]any{"namespace": "kube-system", "name": metricsServerName, "port": int64(443)},
			"caBundle": base64.StdEncoding.EncodeToString(ca),
			// upstream's priorities
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
		},
	}}
	if _, err := dyn.Resource(apiServiceResource).Create(ctx, apiService, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating APIService %s: %w", metricsAPIService, err)
	}
	return nil
}

// waitAPIServiceAvailable waits until the API server's availability check
// of the metrics APIService passes (it reaches metrics-server through the
// EndpointSlice and is answered).
func (c *Cluster) waitAPIServiceAvailable(ctx context.Context, p *process) error {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	last := "not read yet"
	err = waitFor(ctx, p, 90*time.Second, func() bool {
		u, err := dyn.Resource(apiServiceResource).Get(ctx, metricsAPIService, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Available" {
				last = fmt.Sprintf("Available %v: %v %v", m["status"], m["reason"], m["message"])
				return m["status"] == "True"
			}
		}
		return false
	})
	if err != nil {
		return fmt.Errorf("waiting for APIService %s (%s): %w", metricsAPIService, last, err)
	}
	return nil
}

// hostIP is the machine's first IPv4 address that is not loopback or
// link-local: the API server refuses loopback addresses in an
// EndpointSlice.
func hostIP() (net.IP, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.To4(), nil
		}
	}
	return nil, errors.New("the machine has no IPv4 address but loopback, and the API server refuses loopback endpoints: set Options.MetricsServerIP")
}

// freePortOn returns a TCP port on ip that was free a moment ago, or 0.
func freePortOn(ip net.IP) int {
	l, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
