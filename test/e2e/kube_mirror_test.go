package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/lifecycle"
)

// TestKubeMirrorPods checks that a static pod shows in the API server as
// its mirror pod: created with the static pod's hash and the node as
// owner, with the static pod's status, counted by kubelet_mirror_pods,
// recreated when deleted (the container runs on, not restarted), and
// removed when the manifest goes.
func TestKubeMirrorPods(t *testing.T) {
	k := startKubeHost(t)
	k.waitNodeReady(time.Minute)
	path := k.writeManifest("web.yaml", staticManifest("static-web", "mirrored"))
	const name = "static-web-" + kubeNode

	mirror := k.waitAPIPod(name, time.Minute, "a Running mirror pod", func(p *v1.Pod) bool {
		return lifecycle.IsMirrorPod(p) && running(p)
	})
	if refs := mirror.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Node" || refs[0].Name != kubeNode {
		t.Errorf("mirror owner references %+v; want the Node", refs)
	}
	if mirror.Annotations[lifecycle.ConfigMirrorAnnotation] == "" {
		t.Errorf("mirror annotations %v; want config.mirror with the static pod's hash", mirror.Annotations)
	}
	poll(t, 30*time.Second, func() bool {
		v, err := k.metric("kubelet_mirror_pods")
		return err == nil && v == 1
	}, func() string {
		v, err := k.metric("kubelet_mirror_pods")
		return fmt.Sprintf("kubelet_mirror_pods %v, %v; want 1", v, err)
	})
	before := containerIDs(mirror)

	if err := k.pods.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again := k.waitAPIPod(name, time.Minute, "a new mirror pod", func(p *v1.Pod) bool {
		return p.UID != mirror.UID && lifecycle.IsMirrorPod(p) && running(p)
	})
	if after := containerIDs(again); after["main"] != before["main"] || again.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("after the mirror was recreated the container is %v (restarts %d); want %v, not restarted",
			after, again.Status.ContainerStatuses[0].RestartCount, before)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	k.waitAPIGone(name, time.Minute)
}
