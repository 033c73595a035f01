package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/internal/registrartest"
)

// TestKubeCSIRegistration: in Kubernetes mode a CSI driver that registers
// through the plugins_registry directory (the registrar written against
// the upstream pluginregistration v1 API, in front of the real loop
// driver) appears in the node's CSINode with its NodeGetInfo (node ID,
// topology keys, allocatable count), its topology on the Node's labels and
// its node ID in the csi.volume.kubernetes.io/nodeid annotation; a pod of
// the API server with a claim of the driver runs through it; the socket
// removed takes the driver out of the CSINode and the annotation.
func TestKubeCSIRegistration(t *testing.T) {
	const topoKey = "topology.loop.csi.podhost.dev/node"
	d := startLoopDriverWith(t, "topology: {"+topoKey+": node-1}\nmaxVolumesPerNode: 10\n")
	k := startKubeHostWith(t, fmt.Sprintf(`  - name: csi
    kind: volume
    path: volume-csi
    config: {drivers: [], stateDir: "%s"}
`, filepath.Join(t.TempDir(), "volume-csi")))
	t.Cleanup(func() { unmountBelow(t, k.root) })
	attach := false
	drv := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: loopDriver}, Spec: storagev1.CSIDriverSpec{AttachRequired: &attach}}
	if _, err := k.cluster.Client.StorageV1().CSIDrivers().Create(t.Context(), drv, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CSIDriver: %v", err)
	}
	k.waitNodeReady(60 * time.Second)

	r, err := registrartest.Serve(filepath.Join(k.root, "plugins_registry", "loop-reg.sock"), registrartest.CSIInfo(loopDriver, d.endpoint))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	s, err := r.Status(t.Context())
	if err != nil || !s.GetPluginRegistered() {
		t.Fatalf("registration: %v, %v\n%s", s, err, k.logTail())
	}

	// The registrar hears of success only once the CSINode is written.
	c, err := k.cluster.Client.StorageV1().CSINodes().Get(t.Context(), kubeNode, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("csinode: %v", err)
	}
	if len(c.OwnerReferences) != 1 || c.OwnerReferences[0].Kind != "Node" || c.OwnerReferences[0].Name != kubeNode {
		t.Errorf("csinode owners %+v; want the Node", c.OwnerReferences)
	}
	i := slices.IndexFunc(c.Spec.Drivers, func(e storagev1.CSINodeDriver) bool { return e.Name == loopDriver })
	if i < 0 {
		t.Fatalf("csinode drivers %+v; want %s", c.Spec.Drivers, loopDriver)
	}
	e := c.Spec.Drivers[i]
	if e.NodeID != "node-1" || !slices.Equal(e.TopologyKeys, []string{topoKey}) || e.Allocatable == nil || e.Allocatable.Count == nil || *e.Allocatable.Count != 10 {
		t.Errorf("csinode entry %+v; want node-1, [%s], count 10", e, topoKey)
	}
	n, err := k.cluster.Client.CoreV1().Nodes().Get(t.Context(), kubeNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels[topoKey] != "node-1" {
		t.Errorf("node labels %v; want %s=node-1", n.Labels, topoKey)
	}
	if a := n.Annotations["csi.volume.kubernetes.io/nodeid"]; a != `{"`+loopDriver+`":"node-1"}` {
		t.Errorf("node id annotation %q", a)
	}

	zero := int64(0)
	k.createVolumeAndClaim("data", d.createVolume(t, "kube-registered"), true)
	k.create(kubeClaimPod("kreg", "data", `echo through-a-registered-driver > /data/file && sync && echo done; exec sleep 3600`))
	k.waitAPIRunning("kreg", 90*time.Second)
	k.waitLog("kreg", "main", "done")
	k.deleteAPIPod("kreg", &zero)
	k.waitAPIGone("kreg", 60*time.Second)

	r.Stop()
	poll(t, 30*time.Second, func() bool {
		c, err := k.cluster.Client.StorageV1().CSINodes().Get(t.Context(), kubeNode, metav1.GetOptions{})
		n, nerr := k.cluster.Client.CoreV1().Nodes().Get(t.Context(), kubeNode, metav1.GetOptions{})
		return err == nil && nerr == nil && len(c.Spec.Drivers) == 0 && n.Annotations["csi.volume.kubernetes.io/nodeid"] == ""
	}, func() string { return "the driver is still in the CSINode or the annotation\n" + k.logTail() })
}
