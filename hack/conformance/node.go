package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/test/crisetup"
	"github.com/podhost/podhost/test/kubecluster"
)

// node is the podhost process serving the cluster's one node.
type node struct {
	cmd    *exec.Cmd
	log    string
	root   string
	exited chan struct{}
}

// startNode writes the host config and starts bin/podhost in Kubernetes
// mode: the node's own credentials, its address on the pod network (the
// bridge's, which both the API server and the pods reach), a daemon
// endpoint there with a certificate the API server trusts, and the
// containerd runtime plugin on the private containerd.
func startNode(ctx context.Context, binDir, dir string, c *kubecluster.Cluster, ctrd *crisetup.Containerd) (*node, error) {
	binDir, err := filepath.Abs(binDir)
	if err != nil {
		return nil, err
	}
	host := filepath.Join(binDir, "podhost")
	if _, err := os.Stat(host); err != nil {
		return nil, fmt.Errorf("%w; build it with: make build", err)
	}
	kubeconfig, err := c.NodeKubeconfig(nodeName)
	if err != nil {
		return nil, err
	}
	ip := ctrd.PodGateway()
	if !ip.IsValid() {
		return nil, fmt.Errorf("containerd has no pod network")
	}
	cert, key, err := c.NodeServingCert(nodeName, net.IP(ip.AsSlice()))
	if err != nil {
		return nil, err
	}
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, err
	}
	config := filepath.Join(dir, "host.yaml")
	cfg := fmt.Sprintf(`apiVersion: podhost.dev/v1alpha1
kind: HostConfig
rootDir: %s
pluginDir: %s
nodeName: %s
logLevel: info
clusterDomain: cluster.local
evictionHard: {nodefs.available: "0%%", nodefs.inodesFree: "0%%", imagefs.available: "0%%"}
kubernetes:
  kubeconfig: %s
  nodeIP: %s
  server: {address: "%s:0", tlsCertFile: %s, tlsPrivateKeyFile: %s, clientCAFile: %s}
plugins:
  - name: containerd
    kind: runtime
    path: runtime-containerd
    config: {endpoint: "%s"}
`, root, filepath.Join(binDir, "plugins"), nodeName, kubeconfig, ip, ip, cert, key, c.CAFile, ctrd.Endpoint())
	if err := os.WriteFile(config, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	n := &node{log: filepath.Join(dir, "podhost.log"), root: root, exited: make(chan struct{})}
	out, err := os.Create(n.log)
	if err != nil {
		return nil, err
	}
	n.cmd = exec.Command(host, "run", "--config", config)
	n.cmd.Stdout, n.cmd.Stderr = out, out
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.cmd.Start(); err != nil {
		out.Close()
		return nil, err
	}
	go func() {
		_ = n.cmd.Wait()
		out.Close()
		close(n.exited)
	}()
	logf("podhost node %s on %s (log %s)", nodeName, ip, n.log)
	return n, nil
}

// waitReady waits until the Node is Ready and carries no taint that keeps
// the suite's pods off it.
func (n *node) waitReady(ctx context.Context, c *kubecluster.Cluster, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last string
	for {
		select {
		case <-n.exited:
			return fmt.Errorf("podhost exited (%v)\n%s", n.cmd.ProcessState, n.tail(40))
		default:
		}
		node, err := c.Client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err == nil {
			last = fmt.Sprintf("conditions %+v, taints %+v", node.Status.Conditions, node.Spec.Taints)
			if ready(node) && len(node.Spec.Taints) == 0 {
				return nil
			}
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s not Ready and untainted after %s: %s\n%s", nodeName, limit, last, n.tail(40))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func ready(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// stop sends SIGTERM and waits up to a minute, then kills.
func (n *node) stop() {
	logf("stopping podhost")
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(time.Minute):
		logf("podhost did not stop within a minute of SIGTERM; killing it")
		_ = n.cmd.Process.Kill()
		<-n.exited
	}
	// The host made its root dir a shared mount by mounting it on itself
	// (as the kubelet does); undone so that nothing is left mounted.
	_ = syscall.Unmount(n.root, syscall.MNT_DETACH)
}

func (n *node) tail(lines int) string {
	data, err := os.ReadFile(n.log)
	if err != nil {
		return err.Error()
	}
	return "podhost log:\n" + tail(strings.TrimSpace(string(data)), lines)
}
