package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubeNodeRegistersAndServesLogs checks the Node object's side of
// Kubernetes mode with the real binary: the node registers Ready with the
// runtime's version and its daemon endpoint, records the kubelet's node
// events (Starting, NodeReady) in the API server, renews its Lease, and
// `kubectl logs` reads a container's log through the API server, which
// dials the node with its kubelet-client certificate.
func TestKubeNodeRegistersAndServesLogs(t *testing.T) {
	k := startKubeHost(t)
	ctx := t.Context()
	var node *v1.Node
	poll(t, time.Minute, func() bool {
		n, err := k.cluster.Client.CoreV1().Nodes().Get(ctx, kubeNode, metav1.GetOptions{})
		if err != nil {
			return false
		}
		node = n
		for _, c := range n.Status.Conditions {
			if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue && c.Reason == "KubeletReady" {
				return n.Status.DaemonEndpoints.KubeletEndpoint.Port > 0
			}
		}
		return false
	}, func() string {
		return fmt.Sprintf("node %s not Ready with a daemon port: %+v\n%s", kubeNode, node, k.logTail())
	})
	if v := node.Status.NodeInfo.ContainerRuntimeVersion; !strings.HasPrefix(v, "containerd://") {
		t.Errorf("containerRuntimeVersion %q; want containerd://VERSION", v)
	}
	if !strings.HasPrefix(node.Status.NodeInfo.KubeletVersion, "v1.") {
		t.Errorf("kubeletVersion %q; want the Kubernetes version podhost speaks", node.Status.NodeInfo.KubeletVersion)
	}
	// The node's events, as a kubelet records them: Starting, then each
	// condition's, on the Node (whose events kubectl describe node finds
	// by the node's name as the UID).
	var evs []v1.Event
	poll(t, 30*time.Second, func() bool {
		list, err := k.cluster.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + kubeNode})
		if err != nil {
			return false
		}
		evs = list.Items
		var starting, ready bool
		for _, e := range evs {
			starting = starting || e.Reason == "Starting" && e.Message == "Starting kubelet."
			ready = ready || e.Reason == "NodeReady" && e.Message == "Node "+kubeNode+" status is now: NodeReady" &&
				e.Type == v1.EventTypeNormal && e.Source.Component == "kubelet" && e.Source.Host == kubeNode &&
				e.InvolvedObject.UID == kubeNode
		}
		return starting && ready
	}, func() string {
		return fmt.Sprintf("node events: %+v; want Starting and NodeReady\n%s", evs, k.logTail())
	})
	lease, err := k.cluster.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, kubeNode, metav1.GetOptions{})
	if err != nil || lease.Spec.RenewTime == nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != kubeNode {
		t.Fatalf("lease of %s: %+v, %v; want one held by the node", kubeNode, lease, err)
	}

	k.create(kubePod("talker", v1.RestartPolicyAlways, sh("app", "echo first line; echo second line; exec sleep 3600")))
	k.waitAPIRunning("talker", time.Minute)
	var out string
	poll(t, 30*time.Second, func() bool {
		out, err = k.cluster.Kubectl(ctx, "logs", "-n", "default", "talker", "-c", "app")
		return err == nil && strings.Contains(out, "second line")
	}, func() string { return fmt.Sprintf("kubectl logs: %q, %v\n%s", out, err, k.logTail()) })
	if !strings.Contains(out, "first line") {
		t.Errorf("kubectl logs printed %q; want both lines", out)
	}
	out, err = k.cluster.Kubectl(ctx, "logs", "-n", "default", "talker", "--tail=1")
	if err != nil || strings.TrimSpace(out) != "second line" {
		t.Errorf("kubectl logs --tail=1: %q, %v; want the last line", out, err)
	}

	// At rest a node writes no pod status: over two full status batches
	// (10 s each) the API server sees no status patch. A status that
	// differs from the API's copy in a field the node never sets
	// (qosClass) was patched every batch, with no change to show for it.
	before := k.statusPatches()
	<-time.After(25 * time.Second)
	if n := k.statusPatches() - before; n != 0 {
		t.Errorf("%v pod status patches at rest in 25 s; want none", n)
	}
}

// statusPatches is the API server's count of pod status patches so far.
func (k *kubeHost) statusPatches() float64 {
	k.t.Helper()
	body, err := k.cluster.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(k.t.Context())
	if err != nil {
		k.t.Fatalf("reading the API server's metrics: %v", err)
	}
	var sum float64
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `verb="PATCH"`) ||
			!strings.Contains(line, `resource="pods"`) || !strings.Contains(line, `subresource="status"`) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			k.t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}
