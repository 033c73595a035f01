package mirrorpods

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/test/kubecluster"
)

func static(hash string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-n1", Namespace: "default", UID: "static-uid", Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{lifecycle.ConfigSourceAnnotation: "file", lifecycle.ConfigHashAnnotation: hash}},
		Spec: v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Name: "app", Image: "podhost.local/busybox:1"}}},
	}
}

// TestMirrorPodsWithTheNodesOwnCredentials creates, re-creates and deletes
// mirror pods against a real API server as node n1, under the Node
// authorizer and NodeRestriction.
func TestMirrorPodsWithTheNodesOwnCredentials(t *testing.T) {
	c := kubecluster.StartForTest(t, kubecluster.Options{Nodes: []string{"n1"}})
	ctx := t.Context()
	api, err := c.NodeClient("n1")
	if err != nil {
		t.Fatal(err)
	}
	m := New(api, "n1")
	if err := m.CreateMirrorPod(ctx, static("h1")); err == nil || !strings.Contains(err.Error(), "node n1") {
		t.Fatalf("mirror before the Node exists: %v; want an error naming the node", err)
	}
	node, err := api.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CreateMirrorPod(ctx, static("h1")); err != nil {
		t.Fatalf("CreateMirrorPod: %v", err)
	}
	if err := m.CreateMirrorPod(ctx, static("h1")); err != nil {
		t.Fatalf("CreateMirrorPod again: %v; want nil for an existing mirror", err)
	}
	got, err := c.Client.CoreV1().Pods("default").Get(ctx, "web-n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !lifecycle.IsMirrorPod(got) || !lifecycle.IsMirrorPodOf(got, static("h1")) || got.Labels["app"] != "web" {
		t.Errorf("mirror %v; want the static pod's labels and its hash as config.mirror", got.ObjectMeta)
	}
	if refs := got.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Node" || refs[0].UID != node.UID {
		t.Errorf("owner references %+v; want node n1", refs)
	}

	stale := got.DeepCopy()
	stale.UID = "not-the-mirror"
	if err := m.DeleteMirrorPod(ctx, stale); err == nil {
		t.Error("DeleteMirrorPod with another UID: nil; want the precondition to fail")
	}
	if err := m.DeleteMirrorPod(ctx, got); err != nil {
		t.Fatalf("DeleteMirrorPod: %v", err)
	}
	if _, err := c.Client.CoreV1().Pods("default").Get(ctx, "web-n1", metav1.GetOptions{}); err == nil {
		t.Error("mirror still there after DeleteMirrorPod")
	}
	if err := m.DeleteMirrorPod(ctx, got); err != nil {
		t.Errorf("DeleteMirrorPod of a gone mirror: %v; want nil", err)
	}

	other := static("h1")
	other.Spec.NodeName = "n2"
	other.Name = "web-n2"
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = New(api, "n2").CreateMirrorPod(ctx, other)
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("node n1 creating a mirror pod for node n2: %v; want the Node authorizer to refuse", err)
	}
}
