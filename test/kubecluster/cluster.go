package kubecluster

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options say what a cluster is started with.
type Options struct {
	// Nodes are the node names that get a token and a kubeconfig.
	Nodes []string
	// Binaries overrides FindBinaries.
	Binaries *Binaries
	// ControllerManager starts kube-controller-manager too: service
	// accounts and their tokens, the root CA config map in every
	// namespace, namespace deletion, garbage collection, the node lifecycle
	// controller and the workload controllers. The upstream e2e suite
	// relies on it.
	ControllerManager bool
	// Scheduler starts kube-scheduler too, so that pods without a nodeName
	// are placed.
	Scheduler bool
	// MetricsServer turns on the API server's aggregation layer and runs
	// the real metrics-server (hack/metrics-server.sh) as a process of the
	// machine, registered as APIService v1beta1.metrics.k8s.io, so that
	// `kubectl top` works against the cluster's nodes (metricsserver.go).
	MetricsServer bool
	// MetricsServerIP is where metrics-server listens and what its
	// EndpointSlice names; the API server refuses loopback there. Nil: the
	// machine's first IPv4 address that is not loopback.
	MetricsServerIP net.IP
}

// Cluster is a running etcd and kube-apiserver.
type Cluster struct {
	// Dir holds the certificates, keys, tokens, kubeconfigs, etcd's data
	// and the logs (etcd.log, kube-apiserver.log).
	Dir string
	// URL is the API server's https address on 127.0.0.1.
	URL string
	// CAFile is the CA certificate: it signed the API server's serving
	// certificate and the client certificates, and the API server trusts it
	// for kubelet serving certificates.
	CAFile string
	// AdminKubeconfig authenticates as a member of system:masters.
	AdminKubeconfig string
	// KubeletClientCertFile and KubeletClientKeyFile are the identity the
	// API server presents to nodes (CN kube-apiserver-kubelet-client).
	KubeletClientCertFile, KubeletClientKeyFile string
	// Client is an admin clientset.
	Client kubernetes.Interface
	// Config is the admin client's rest config.
	Config *rest.Config

	bins       Binaries
	ca         *authority
	etcd       *process
	apiserver  *process
	apiArgs    []string
	adminToken string
	nodes      map[string]string // node name → token
	// components are the controller manager and the scheduler, when
	// started (controlplane.go).
	components      []*process
	componentTokens map[string]string // user → token
}

// Start starts etcd and the API server with their files under dir and
// waits until the API server is ready and bootstrapped.
func Start(ctx context.Context, dir string, opts Options) (c *Cluster, err error) {
	bins := opts.Binaries
	if bins == nil {
		b, err := FindBinaries()
		if err != nil {
			return nil, err
		}
		bins = &b
	}
	if err := bins.checkComponents(opts); err != nil {
		return nil, err
	}
	if err := bins.checkMetricsServer(opts); err != nil {
		return nil, err
	}
	c = &Cluster{Dir: dir, bins: *bins, nodes: map[string]string{}, componentTokens: map[string]string{}}
	// The returns below set c to nil: stop what was started through a copy.
	started := c
	defer func() {
		if err != nil {
			_ = started.Stop(context.WithoutCancel(ctx))
		}
	}()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := c.writeCredentials(opts.Nodes); err != nil {
		return nil, err
	}
	if opts.MetricsServer {
		if err := c.prepareAggregation(); err != nil {
			return nil, err
		}
	}
	if err := c.startEtcd(ctx); err != nil {
		return nil, err
	}
	if err := c.startAPIServer(ctx); err != nil {
		return nil, err
	}
	if err := c.bootstrap(ctx); err != nil {
		return nil, err
	}
	if err := c.startComponents(ctx, opts); err != nil {
		return nil, err
	}
	if opts.MetricsServer {
		if err := c.startMetricsServer(ctx, opts.MetricsServerIP); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) writeCredentials(nodes []string) error {
	ca, err := newAuthority(c.Dir)
	if err != nil {
		return err
	}
	c.ca, c.CAFile = ca, ca.File
	c.adminToken = token()
	lines := []string{fmt.Sprintf("%s,admin,admin,system:masters", c.adminToken)}
	for _, user := range componentUsers {
		t := token()
		c.componentTokens[user] = t
		lines = append(lines, fmt.Sprintf("%s,%s,%s", t, user, user))
	}
	for _, n := range nodes {
		t := token()
		c.nodes[n] = t
		lines = append(lines, fmt.Sprintf("%s,system:node:%s,node-%s,system:nodes", t, n, n))
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "tokens.csv"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	if _, _, err := ca.issue(c.Dir, "apiserver", leaf{
		commonName: "kube-apiserver", ips: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 96, 0, 1)},
		dnsNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		usage:    []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}); err != nil {
		return err
	}
	if c.KubeletClientCertFile, c.KubeletClientKeyFile, err = ca.issue(c.Dir, "apiserver-kubelet-client", leaf{
		commonName: "kube-apiserver-kubelet-client", orgs: []string{"system:masters"},
		usage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return err
	}
	_, err = serviceAccountKey(c.Dir)
	return err
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	client, peer, err := freePort(), freePort(), error(nil)
	if client == 0 || peer == 0 {
		return errors.New("no free port for etcd")
	}
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", client)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	c.etcd, err = startProcess("etcd", filepath.Join(c.Dir, "etcd.log"), c.bins.Etcd,
		"--name=default", "--data-dir="+filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL, "--unsafe-no-fsync", "--log-level=warn")
	if err != nil {
		return err
	}
	c.apiArgs = append(c.apiArgs, "--etcd-servers="+clientURL)
	return waitFor(ctx, c.etcd, 30*time.Second, func() bool {
		resp, err := http.Get(clientURL + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	port := freePort()
	if port == 0 {
		return errors.New("no free port for the API server")
	}
	c.URL = fmt.Sprintf("https://127.0.0.1:%d", port)
	f := func(name string) string { return filepath.Join(c.Dir, name) }
	c.apiArgs = append(c.apiArgs,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+f("apiserver.crt"), "--tls-private-key-file="+f("apiserver.key"),
		"--client-ca-file="+c.CAFile, "--token-auth-file="+f("tokens.csv"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+f("sa.key"), "--service-account-signing-key-file="+f("sa.key"),
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		// As a kubeadm cluster: privileged pods are the node's to run
		// (upstream PrivilegedPod and the CSI mock drivers need them).
		"--allow-privileged=true",
		"--service-cluster-ip-range=10.96.0.0/16", "--endpoint-reconciler-type=none",
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-client-certificate="+c.KubeletClientCertFile, "--kubelet-client-key="+c.KubeletClientKeyFile,
		"--kubelet-certificate-authority="+c.CAFile,
		"--cert-dir="+f("apiserver-certs"), "--v=1",
	)
	if err := c.runAPIServer(ctx); err != nil {
		return err
	}
	// Tests and benchmarks drive the cluster as fast as they like: no
	// client-side throttling (client-go's default is 5 requests a second).
	c.Config = &rest.Config{Host: c.URL, BearerToken: c.adminToken, TLSClientConfig: rest.TLSClientConfig{CAFile: c.CAFile},
		QPS: 1000, Burst: 2000}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	c.Client = cs
	c.AdminKubeconfig = f("admin.kubeconfig")
	return c.writeKubeconfig(c.AdminKubeconfig, "admin", c.adminToken)
}

// runAPIServer starts the API server with c.apiArgs and waits for /readyz.
func (c *Cluster) runAPIServer(ctx context.Context) error {
	var err error
	c.apiserver, err = startProcess("kube-apiserver", filepath.Join(c.Dir, "kube-apiserver.log"), c.bins.APIServer, c.apiArgs...)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AddCert(c.ca.cert)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer hc.CloseIdleConnections()
	return waitFor(ctx, c.apiserver, 90*time.Second, func() bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+c.adminToken)
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// bootstrap creates what a controller manager would: the default service
// account and the kube-root-ca.crt config map of namespace default. It
// waits for the namespaces the API server creates itself.
func (c *Cluster) bootstrap(ctx context.Context) error {
	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		return err
	}
	err = waitFor(ctx, c.apiserver, 30*time.Second, func() bool {
		_, err := c.Client.CoreV1().Namespaces().Get(ctx, "kube-node-lease", metav1.GetOptions{})
		return err == nil
	})
	if err != nil {
		return fmt.Errorf("waiting for namespace kube-node-lease: %w", err)
	}
	return c.PrepareNamespace(ctx, "default", ca)
}

// PrepareNamespace creates namespace ns when missing, with its default
// service account and kube-root-ca.crt config map (ca nil reads CAFile).
func (c *Cluster) PrepareNamespace(ctx context.Context, ns string, ca []byte) error {
	if ca == nil {
		var err error
		if ca, err = os.ReadFile(c.CAFile); err != nil {
			return err
		}
	}
	create := func(what string, err error) error {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s in namespace %s: %w", what, ns, err)
		}
		return nil
	}
	_, err := c.Client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err := create("the namespace", err); err != nil {
		return err
	}
	_, err = c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err := create("service account default", err); err != nil {
		return err
	}
	_, err = c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": string(ca)},
	}, metav1.CreateOptions{})
	return create("config map kube-root-ca.crt", err)
}

// NodeKubeconfig writes (once) and returns the kubeconfig of a node named
// in Options.Nodes: user system:node:NAME in group system:nodes.
func (c *Cluster) NodeKubeconfig(name string) (string, error) {
	t, ok := c.nodes[name]
	if !ok {
		return "", fmt.Errorf("node %q was not named in Options.Nodes", name)
	}
	path := filepath.Join(c.Dir, "node-"+name+".kubeconfig")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	return path, c.writeKubeconfig(path, "system:node:"+name, t)
}

// NodeClient returns a clientset with the node's own identity, from its
// kubeconfig (NodeKubeconfig).
func (c *Cluster) NodeClient(name string) (kubernetes.Interface, error) {
	path, err := c.NodeKubeconfig(name)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", name, err)
	}
	return kubernetes.NewForConfig(cfg)
}

// NodeServingCert issues the certificate a node serves its daemon endpoint
// with (CN system:node:NAME, for the given addresses), signed by the CA the
// API server trusts for kubelets.
func (c *Cluster) NodeServingCert(name string, ips ...net.IP) (certFile, keyFile string, err error) {
	return c.ca.issue(c.Dir, "node-"+name+"-serving", leaf{
		commonName: "system:node:" + name, orgs: []string{"system:nodes"}, ips: ips, dnsNames: []string{name},
		usage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

func (c *Cluster) writeKubeconfig(path, user, tok string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: c.URL, CertificateAuthority: c.CAFile}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tok}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: user}
	cfg.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
}

// KubectlCmd is kubectl with the admin kubeconfig and args, for a caller
// that wires its input and outputs itself.
func (c *Cluster) KubectlCmd(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, c.bins.Kubectl, append([]string{"--kubeconfig", c.AdminKubeconfig}, args...)...)
}

// Kubectl runs kubectl with the admin kubeconfig and returns its combined
// output.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	cmd := c.KubectlCmd(ctx, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// RestartAPIServer stops the API server and starts it again on the same
// address and etcd; the cluster's state survives. An API server that
// drains its open watches past the SIGTERM wait is killed, which is a
// restart too.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	if err := c.StopAPIServer(ctx); err != nil {
		return err
	}
	return c.runAPIServer(ctx)
}

// StopAPIServer stops the API server only (StartAPIServer brings it back).
func (c *Cluster) StopAPIServer(ctx context.Context) error {
	if c.apiserver == nil {
		return nil
	}
	return c.apiserver.stop(ctx)
}

// StartAPIServer starts a stopped API server again.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	if c.apiserver != nil && !c.apiserver.exited() {
		return errors.New("the API server is running")
	}
	return c.runAPIServer(ctx)
}

// Stop stops the scheduler and the controller manager when running, then
// the API server and etcd.
func (c *Cluster) Stop(ctx context.Context) error {
	var errs []error
	for _, p := range append(slices.Clone(c.components), c.apiserver, c.etcd) {
		if p != nil {
			errs = append(errs, p.stop(ctx))
		}
	}
	return errors.Join(errs...)
}

// Logs returns the last n lines of each program's log, for a failed test.
func (c *Cluster) Logs(n int) string {
	var out []string
	for _, p := range append([]*process{c.etcd, c.apiserver}, c.components...) {
		if p != nil {
			out = append(out, p.tail(n))
		}
	}
	return strings.Join(out, "\n")
}

// waitFor polls ready every 100 ms until it is true, p exits, ctx ends or
// limit passes.
func waitFor(ctx context.Context, p *process, limit time.Duration, ready func() bool) error {
	deadline := time.Now().Add(limit)
	for {
		if ready() {
			return nil
		}
		if p.exited() {
			return fmt.Errorf("%s exited (%v)\n%s", p.name, p.err, p.tail(30))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s\n%s", p.name, limit, p.tail(30))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// freePort returns a loopback TCP port that was free a moment ago, or 0.
func freePort() int {
	return freePortOn(net.IPv4(127, 0, 0, 1))
}

func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
