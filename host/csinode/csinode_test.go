package csinode

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestInstallAndUninstall(t *testing.T) {
	ctx := context.Background()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u1", Labels: map[string]string{"admin": "x"}}}
	client := fake.NewClientset(node)
	k := New(client, "n1")

	if err := k.Install(ctx, Driver{Name: "a.csi", NodeID: "id-a", MaxVolumes: 5, Topology: map[string]string{"topology.a/zone": "z1", "topology.a/rack": "r1"}}); err != nil {
		t.Fatal(err)
	}
	if err := k.Install(ctx, Driver{Name: "b.csi", NodeID: "id-b"}); err != nil {
		t.Fatal(err)
	}
	// Registered again with another node ID: the entry is replaced.
	if err := k.Install(ctx, Driver{Name: "a.csi", NodeID: "id-a2", MaxVolumes: 5, Topology: map[string]string{"topology.a/zone": "z1", "topology.a/rack": "r1"}}); err != nil {
		t.Fatal(err)
	}
	c, err := client.StorageV1().CSINodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.OwnerReferences) != 1 || c.OwnerReferences[0].UID != "u1" || c.OwnerReferences[0].Kind != "Node" {
		t.Errorf("owner references %+v; want the Node", c.OwnerReferences)
	}
	var got []string
	for _, d := range c.Spec.Drivers {
		s := d.Name + " " + d.NodeID + " " + strings.Join(d.TopologyKeys, ",")
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			s += fmt.Sprintf(" count=%d", *d.Allocatable.Count)
		}
		got = append(got, s)
	}
	if want := "b.csi id-b |a.csi id-a2 topology.a/rack,topology.a/zone count=5"; strings.Join(got, "|") != want {
		t.Errorf("drivers %q; want %q", strings.Join(got, "|"), want)
	}
	n, _ := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if n.Labels["topology.a/zone"] != "z1" || n.Labels["topology.a/rack"] != "r1" || n.Labels["admin"] != "x" {
		t.Errorf("labels %v; want the topology and the admin's", n.Labels)
	}
	if a := n.Annotations[NodeIDAnnotation]; a != `{"a.csi":"id-a2","b.csi":"id-b"}` {
		t.Errorf("annotation %s", a)
	}

	// A topology label the node has with another value is refused.
	err = k.Install(ctx, Driver{Name: "c.csi", NodeID: "id-c", Topology: map[string]string{"topology.a/zone": "z9"}})
	if err == nil || !strings.Contains(err.Error(), "topology label topology.a/zone") {
		t.Errorf("clashing topology: %v", err)
	}

	for _, d := range []string{"a.csi", "b.csi", "b.csi"} {
		if err := k.Uninstall(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	c, _ = client.StorageV1().CSINodes().Get(ctx, "n1", metav1.GetOptions{})
	n, _ = client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if len(c.Spec.Drivers) != 0 || n.Annotations[NodeIDAnnotation] != "" || n.Labels["topology.a/zone"] != "z1" {
		t.Errorf("after uninstall: drivers %v, annotations %v, labels %v; want no driver, no annotation, the labels kept", c.Spec.Drivers, n.Annotations, n.Labels)
	}
}
