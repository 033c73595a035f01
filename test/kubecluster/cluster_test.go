package kubecluster

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestClusterServesNodesAndSurvivesRestart checks the control plane the
// way a node uses it: its token may create its own Node and Lease and read
// the pods bound to it, not another node's objects (Node authorizer and
// NodeRestriction at work), kubectl reads through the admin kubeconfig,
// and objects survive an API server restart.
func TestClusterServesNodesAndSurvivesRestart(t *testing.T) {
	c := StartForTest(t, Options{Nodes: []string{"n1"}})
	ctx := t.Context()

	node, err := c.NodeClient("n1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("node n1 creating its Node: %v", err)
	}
	if _, err := node.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("node n1 creating Node n2: %v; want forbidden", err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: "kube-node-lease"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("n1"), LeaseDurationSeconds: ptr.To[int32](40)}}
	if _, err := node.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("node n1 creating its Lease: %v", err)
	}

	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: v1.PodSpec{
		NodeName: "n1", AutomountServiceAccountToken: ptr.To(false),
		Containers: []v1.Container{{Name: "app", Image: "podhost.local/busybox:1"}},
	}}
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("admin creating a pod: %v", err)
	}
	pods, err := node.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("node n1 listing its pods: %v, %v; want the one pod", pods, err)
	}
	out, err := c.Kubectl(ctx, "get", "pods", "-n", "default", "-o", "name")
	if err != nil || strings.TrimSpace(out) != "pod/web" {
		t.Fatalf("kubectl get pods: %q, %v; want pod/web", out, err)
	}

	if err := c.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := c.Client.CoreV1().Pods("default").Get(ctx2, "web", metav1.GetOptions{}); err != nil {
		t.Fatalf("pod after an API server restart: %v", err)
	}
	if v, err := c.Client.Discovery().ServerVersion(); err != nil || v.GitVersion != KubeVersion {
		t.Errorf("server version %v, %v; want %s", v, err, KubeVersion)
	}
}

func TestFindBinariesNamesTheBuildCommand(t *testing.T) {
	t.Setenv("PODHOST_KUBE_CACHE", t.TempDir())
	_, err := FindBinaries()
	if err == nil || !strings.Contains(err.Error(), "hack/kube-binaries.sh") || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Fatalf("FindBinaries in an empty cache: %v; want an error naming the missing binary and the build command", err)
	}
}

func TestMissingMetricsServerNamesItsBuildCommand(t *testing.T) {
	bins := Binaries{MetricsServer: t.TempDir() + "/metrics-server"}
	_, err := Start(t.Context(), t.TempDir(), Options{MetricsServer: true, Binaries: &bins})
	if err == nil || !strings.Contains(err.Error(), "hack/metrics-server.sh") {
		t.Fatalf("Start with metrics-server missing: %v; want an error naming hack/metrics-server.sh", err)
	}
}
