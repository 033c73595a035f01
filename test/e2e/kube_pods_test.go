package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubePodsRunAndReport creates 20 pods through the API server at once:
// each runs, and its status in the API server has the container's ID,
// image ID and start time, the pod's start time and IP (a host-network
// pod's IP is the node's), the node's InternalIP as its host IP, and
// Ready; their events are in the API server. A pod with a volume podhost
// does not serve (nfs) fails in the API
// with a reason and a message naming the volume.
func TestKubePodsRunAndReport(t *testing.T) {
	k := startKubeHost(t)
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k.create(kubePod(fmt.Sprintf("web-%02d", i), v1.RestartPolicyAlways, sh("app", "while true; do sleep 1; done")))
		}()
	}
	wg.Wait()
	k.waitNodeReady(time.Minute)
	node, err := k.cluster.Client.CoreV1().Nodes().Get(t.Context(), kubeNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var internalIP string
	for _, a := range node.Status.Addresses {
		if a.Type == v1.NodeInternalIP && internalIP == "" {
			internalIP = a.Address
		}
	}
	if internalIP == "" {
		t.Fatalf("node %s has no InternalIP: %v", kubeNode, node.Status.Addresses)
	}
	for i := range n {
		name := fmt.Sprintf("web-%02d", i)
		p := k.waitAPIRunning(name, 120*time.Second)
		c := containerStatus(p, "app")
		switch {
		case c == nil || c.ContainerID == "" || c.ImageID == "" || c.Image == "":
			t.Errorf("%s: container status %+v; want a container ID, image and image ID", name, c)
		case c.State.Running == nil || c.State.Running.StartedAt.IsZero():
			t.Errorf("%s: container state %+v; want running with a start time", name, c.State)
		}
		if p.Status.StartTime == nil || p.Status.StartTime.IsZero() {
			t.Errorf("%s: no start time", name)
		}
		if p.Status.PodIP != "127.0.0.1" || len(p.Status.PodIPs) != 1 || p.Status.PodIPs[0].IP != "127.0.0.1" {
			t.Errorf("%s: pod IP %q, IPs %v; want the node's 127.0.0.1 (host network)", name, p.Status.PodIP, p.Status.PodIPs)
		}
		if p.Status.HostIP != internalIP || len(p.Status.HostIPs) != 1 || p.Status.HostIPs[0].IP != internalIP {
			t.Errorf("%s: host IP %q, IPs %v; want the node's InternalIP %s", name, p.Status.HostIP, p.Status.HostIPs, internalIP)
		}
		if !podReady(p) {
			t.Errorf("%s: conditions %+v; want Ready", name, p.Status.Conditions)
		}
		// The kubelet's form of a container ID: the runtime's type, then
		// containerd's ID.
		var ids []string
		for _, r := range k.runningContainers(string(p.UID)) {
			ids = append(ids, r.Id)
		}
		if c != nil && (len(ids) != 1 || c.ContainerID != "containerd://"+ids[0]) {
			t.Errorf("%s: containerd runs %v; want exactly the container of the status, %s, as containerd://ID", name, ids, c.ContainerID)
		}
	}

	// The pods' events reach the API server (kubectl describe pod), on
	// the pod, from the node.
	poll(t, 30*time.Second, func() bool {
		list, err := k.cluster.Client.CoreV1().Events("default").List(t.Context(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Pod,involvedObject.name=web-00,reason=Started"})
		return err == nil && len(list.Items) > 0 && list.Items[0].Source.Host == kubeNode
	}, func() string { return "no Started event of pod web-00 from the node in the API server" })

	// A volume source podhost does not serve fails the pod, naming it.
	nfs := kubePod("nfs", v1.RestartPolicyAlways, sh("app", "sleep 3600"))
	nfs.Spec.Volumes = []v1.Volume{{Name: "share", VolumeSource: v1.VolumeSource{NFS: &v1.NFSVolumeSource{Server: "127.0.0.1", Path: "/export"}}}}
	k.create(nfs)
	p := k.waitAPIPod("nfs", 60*time.Second, "failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	if p.Status.Reason != "UnsupportedVolume" || !strings.Contains(p.Status.Message, `volume "share"`) {
		t.Errorf("nfs: reason %q message %q; want UnsupportedVolume naming volume %q", p.Status.Reason, p.Status.Message, "share")
	}
	if got := k.criContainers(string(p.UID)); len(got) != 0 {
		t.Errorf("nfs has containers in containerd: %v", got)
	}
	// Deleting the rejected pod removes it: nothing of it runs.
	k.deleteAPIPod("nfs", nil)
	k.waitAPIGone("nfs", 30*time.Second)
}

func podReady(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
