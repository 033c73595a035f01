package e2e

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedv1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/podhost/podhost/test/crisetup"
	"github.com/podhost/podhost/test/kubecluster"
)

// kubeNode is the node name the Kubernetes-mode tests give the host.
const kubeNode = "n1"

// kubeHost is a host in Kubernetes mode: a real etcd and kube-apiserver,
// and a podhost joined to it as node n1 with the node's own credentials.
type kubeHost struct {
	*podHost
	cluster *kubecluster.Cluster
	// pods is the admin client's view of namespace default.
	pods typedv1.PodInterface
}

// startKubeHost starts the control plane, then the host. The cluster is
// started first so that its cleanup runs after the host's.
func startKubeHost(t *testing.T) *kubeHost {
	t.Helper()
	return startKubeHostVia(t, "", nil)
}

// startKubeHostWith is startKubeHost with extra plugin entries (lines of
// the host config's plugins list).
func startKubeHostWith(t *testing.T, plugins string) *kubeHost {
	t.Helper()
	return startKubeHostVia(t, plugins, nil)
}

// startKubeHostVia is startKubeHostWith whose runtime plugin reaches
// containerd through via (startPodHostVia), started with opts.
func startKubeHostVia(t *testing.T, plugins string, via func(*crisetup.Containerd) string, opts ...crisetup.Option) *kubeHost {
	t.Helper()
	return startKubeHostOn(t, net.IPv4(127, 0, 0, 1), plugins, via, opts...)
}

// startKubeHostOn is startKubeHostVia with the node's InternalIP and
// daemon endpoint on ip. The API server's node proxy (/api/v1/nodes/N/proxy)
// refuses loopback addresses ("address not allowed"), while logs and
// streams go through its kubelet client, which does not.
func startKubeHostOn(t *testing.T, ip net.IP, plugins string, via func(*crisetup.Containerd) string, opts ...crisetup.Option) *kubeHost {
	t.Helper()
	return startKubeHostCluster(t, kubecluster.Options{}, ip, plugins, via, opts...)
}

// startKubeHostCluster is startKubeHostOn with a control plane started
// with cluster (its Nodes set to the test node).
func startKubeHostCluster(t *testing.T, cluster kubecluster.Options, ip net.IP, plugins string, via func(*crisetup.Containerd) string, opts ...crisetup.Option) *kubeHost {
	t.Helper()
	cluster.Nodes = []string{kubeNode}
	c := kubecluster.StartForTest(t, cluster)
	kubeconfig, err := c.NodeKubeconfig(kubeNode)
	if err != nil {
		t.Fatal(err)
	}
	// The daemon endpoint listens where the node's InternalIP says, on a
	// port of its own, with a certificate the API server trusts.
	cert, key, err := c.NodeServingCert(kubeNode, ip)
	if err != nil {
		t.Fatal(err)
	}
	h := startPodHostVia(t, plugins+fmt.Sprintf("nodeName: %s\nkubernetes:\n  kubeconfig: %s\n  nodeIP: %s\n"+
		"  server: {address: %q, tlsCertFile: %s, tlsPrivateKeyFile: %s, clientCAFile: %s}\n",
		kubeNode, kubeconfig, ip, net.JoinHostPort(ip.String(), "0"), cert, key, c.CAFile), via, opts...)
	return &kubeHost{podHost: h, cluster: c, pods: c.Client.CoreV1().Pods("default")}
}

// kubePod is busyPod bound to the test node, without the service-account
// token volume, which these tests do not need (TestKubeVolumesProjected
// runs a pod with it).
func kubePod(name string, policy v1.RestartPolicy, containers ...v1.Container) *v1.Pod {
	p := busyPod(name, policy, containers...)
	p.Spec.NodeName = kubeNode
	no := false
	p.Spec.AutomountServiceAccountToken = &no
	return p
}

// create creates the pod through the API server.
func (k *kubeHost) create(pod *v1.Pod) *v1.Pod {
	k.t.Helper()
	got, err := k.pods.Create(k.t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		k.t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	return got
}

// apiPod returns the pod as the API server has it; ok is false when it is
// gone. Other errors fail the test.
func (k *kubeHost) apiPod(name string) (*v1.Pod, bool) {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(k.t.Context(), 10*time.Second)
	defer cancel()
	p, err := k.pods.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, false
	case err != nil:
		k.t.Fatalf("get pod %s: %v", name, err)
	}
	return p, true
}

// waitAPIPod waits until the API server's pod satisfies cond.
func (k *kubeHost) waitAPIPod(name string, limit time.Duration, what string, cond func(*v1.Pod) bool) *v1.Pod {
	k.t.Helper()
	var last *v1.Pod
	poll(k.t, limit, func() bool {
		p, ok := k.apiPod(name)
		last = p
		return ok && cond(p)
	}, func() string {
		return fmt.Sprintf("api pod %s: %s; last status %s\nruntime: %s\n%s", name, what, podStatusString(last), k.criSummary(last), k.logTail())
	})
	return last
}

// waitAPIRunning waits until the API server shows the pod running.
func (k *kubeHost) waitAPIRunning(name string, limit time.Duration) *v1.Pod {
	k.t.Helper()
	return k.waitAPIPod(name, limit, "running", running)
}

// containerIDs maps each container name of the pod's API status to its
// container ID, without a runtime prefix ("containerd://") if it has one.
func containerIDs(p *v1.Pod) map[string]string {
	out := map[string]string{}
	for _, c := range p.Status.ContainerStatuses {
		id := c.ContainerID
		if _, after, ok := strings.Cut(id, "://"); ok {
			id = after
		}
		out[c.Name] = id
	}
	return out
}

// deleteAPIPod deletes the pod through the API server, with grace when not
// nil.
func (k *kubeHost) deleteAPIPod(name string, grace *int64) {
	k.t.Helper()
	if err := k.pods.Delete(k.t.Context(), name, metav1.DeleteOptions{GracePeriodSeconds: grace}); err != nil {
		k.t.Fatalf("delete pod %s: %v", name, err)
	}
}

// waitAPIGone waits until the API server no longer has the pod.
func (k *kubeHost) waitAPIGone(name string, limit time.Duration) {
	k.t.Helper()
	var last *v1.Pod
	poll(k.t, limit, func() bool {
		p, ok := k.apiPod(name)
		last = p
		return !ok
	}, func() string {
		return fmt.Sprintf("api pod %s still there; last status %s\n%s", name, podStatusString(last), k.logTail())
	})
}

// waitNodeReady waits until the Node is Ready: admission needs its labels
// and allocatable.
func (k *kubeHost) waitNodeReady(limit time.Duration) {
	k.t.Helper()
	var last *v1.Node
	poll(k.t, limit, func() bool {
		n, err := k.cluster.Client.CoreV1().Nodes().Get(k.t.Context(), kubeNode, metav1.GetOptions{})
		if err != nil {
			return false
		}
		last = n
		for _, c := range n.Status.Conditions {
			if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
				return true
			}
		}
		return false
	}, func() string { return fmt.Sprintf("node %s not Ready: %+v\n%s", kubeNode, last, k.logTail()) })
}
