package kubecluster

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestClusterRunsControllerManagerAndScheduler starts the cluster with both
// components and checks each does its part for the upstream e2e suite: a
// new namespace gets its default service account and kube-root-ca.crt from
// the controller manager (Start only makes them for namespace default),
// and a pod without a nodeName is bound by the scheduler to the one Ready
// node.
func TestClusterRunsControllerManagerAndScheduler(t *testing.T) {
	c := StartForTest(t, Options{Nodes: []string{"n1"}, ControllerManager: true, Scheduler: true})
	ctx := t.Context()

	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "service account default and config map kube-root-ca.crt in namespace e2e", func() bool {
		_, errSA := c.Client.CoreV1().ServiceAccounts("e2e").Get(ctx, "default", metav1.GetOptions{})
		_, errCM := c.Client.CoreV1().ConfigMaps("e2e").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return errSA == nil && errCM == nil
	}, c)

	node, err := c.NodeClient("n1")
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	capacity := v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi"), v1.ResourcePods: resource.MustParse("110")}
	n.Status = v1.NodeStatus{Capacity: capacity, Allocatable: capacity, Conditions: []v1.NodeCondition{{
		Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "Test", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}}
	if _, err := node.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unplaced", Namespace: "e2e"}, Spec: v1.PodSpec{
		AutomountServiceAccountToken: ptr.To(false),
		Containers:                   []v1.Container{{Name: "app", Image: "podhost.local/busybox:1"}},
	}}
	if _, err := c.Client.CoreV1().Pods("e2e").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "pod unplaced bound to n1", func() bool {
		p, err := c.Client.CoreV1().Pods("e2e").Get(ctx, "unplaced", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "n1"
	}, c)
}

func TestStartNamesTheBuildForMissingComponents(t *testing.T) {
	dir := t.TempDir()
	b := Binaries{ControllerManager: dir + "/kube-controller-manager", Scheduler: dir + "/kube-scheduler"}
	_, err := Start(t.Context(), t.TempDir(), Options{Binaries: &b, Scheduler: true})
	if err == nil || !strings.Contains(err.Error(), "hack/kube-binaries.sh") || !strings.Contains(err.Error(), "kube-scheduler") ||
		strings.Contains(err.Error(), "kube-controller-manager") {
		t.Fatalf("Start asking for a missing scheduler: %v; want an error naming kube-scheduler alone and hack/kube-binaries.sh", err)
	}
}

// waitUntil polls cond every 200 ms until it holds or limit passes, then
// fails the test with what and the logs' tails.
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool, c *Cluster) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not after %s: %s\n%s", limit, what, c.Logs(30))
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
