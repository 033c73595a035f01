package kubecluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"
)

// The users the controller manager and the scheduler authenticate as: the
// API server's RBAC bootstrap policy binds its roles for them to these
// names.
const (
	controllerManagerUser = "system:kube-controller-manager"
	schedulerUser         = "system:kube-scheduler"
)

var componentUsers = []string{controllerManagerUser, schedulerUser}

// checkComponents fails when opts ask for a component whose binary is
// missing, naming the command that builds it.
func (b Binaries) checkComponents(opts Options) error {
	var paths []string
	if opts.ControllerManager {
		paths = append(paths, b.ControllerManager)
	}
	if opts.Scheduler {
		paths = append(paths, b.Scheduler)
	}
	return checkExecutables("sh hack/kube-binaries.sh (make kube-binaries)", paths...)
}

// startComponents starts the controller manager and the scheduler that
// opts ask for, each with a token of its own user, and waits until each
// one's /healthz answers.
func (c *Cluster) startComponents(ctx context.Context, opts Options) error {
	if opts.ControllerManager {
		err := c.startComponent(ctx, "kube-controller-manager", c.bins.ControllerManager, controllerManagerUser,
			// Every controller acts as a service account of its own, with
			// the role the bootstrap policy gives it; the controller
			// manager's own user may only create those accounts' tokens.
			"--use-service-account-credentials=true",
			"--service-account-private-key-file="+filepath.Join(c.Dir, "sa.key"),
			"--root-ca-file="+c.CAFile,
			"--service-cluster-ip-range=10.96.0.0/16",
		)
		if err != nil {
			return err
		}
	}
	if opts.Scheduler {
		if err := c.startComponent(ctx, "kube-scheduler", c.bins.Scheduler, schedulerUser); err != nil {
			return err
		}
	}
	return nil
}

// startComponent writes the kubeconfig of user and a serving certificate
// for 127.0.0.1, starts bin on a free port with them and args, and waits
// for /healthz, verified against the cluster's CA.
func (c *Cluster) startComponent(ctx context.Context, name, bin, user string, args ...string) error {
	kubeconfig := filepath.Join(c.Dir, name+".kubeconfig")
	if err := c.writeKubeconfig(kubeconfig, user, c.componentTokens[user]); err != nil {
		return err
	}
	cert, key, err := c.ca.issue(c.Dir, name+"-serving", leaf{
		commonName: name, ips: []net.IP{net.IPv4(127, 0, 0, 1)},
		usage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return err
	}
	port := freePort()
	if port == 0 {
		return fmt.Errorf("no free port for %s", name)
	}
	args = append([]string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig, "--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + cert, "--tls-private-key-file=" + key,
		"--leader-elect=false", "--v=1",
	}, args...)
	p, err := startProcess(name, filepath.Join(c.Dir, name+".log"), bin, args...)
	if err != nil {
		return err
	}
	c.components = append(c.components, p)
	return c.waitHealthy(ctx, p, fmt.Sprintf("https://127.0.0.1:%d/healthz", port))
}

// waitHealthy waits until url answers 200 OK to an anonymous GET over TLS
// verified against the cluster's CA, while p runs.
func (c *Cluster) waitHealthy(ctx context.Context, p *process, url string) error {
	pool := x509.NewCertPool()
	pool.AddCert(c.ca.cert)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer hc.CloseIdleConnections()
	return waitFor(ctx, p, 90*time.Second, func() bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}
