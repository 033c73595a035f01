package e2e

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestKubeAdmissionRejects checks that a pod the node cannot run is
// failed in the API with the kubelet's reason and never starts a
// container, and that deleting it removes it: a nodeSelector the node
// does not match, a request beyond the node's cpu, a host port another pod
// holds. The pod holding the port runs on. (An unknown runtime class is
// refused by the API server's own RuntimeClass admission before the node
// sees the pod; host/admission's tests cover the node's check.)
func TestKubeAdmissionRejects(t *testing.T) {
	k := startKubeHost(t)
	k.waitNodeReady(time.Minute)
	fits := kubePod("fits", v1.RestartPolicyAlways, sh("app", "exec sleep 3600"))
	fits.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 18080, HostPort: 18080}}
	k.create(fits)
	k.waitAPIRunning("fits", time.Minute)

	selector := kubePod("picky", v1.RestartPolicyAlways, sh("app", "exec sleep 3600"))
	selector.Spec.NodeSelector = map[string]string{"disktype": "ssd"}
	greedy := kubePod("greedy", v1.RestartPolicyAlways, sh("app", "exec sleep 3600"))
	greedy.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("10000")}
	clash := kubePod("clash", v1.RestartPolicyAlways, sh("app", "exec sleep 3600"))
	clash.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 18080, HostPort: 18080}}
	for _, tc := range []struct {
		pod    *v1.Pod
		reason string
		inMsg  string
	}{
		{selector, "NodeAffinity", "nodeSelector"},
		{greedy, "OutOfcpu", "cpu"},
		{clash, "NodePorts", "default/fits"},
	} {
		k.create(tc.pod)
		got := k.waitAPIPod(tc.pod.Name, time.Minute, "failed with "+tc.reason, func(p *v1.Pod) bool {
			return p.Status.Phase == v1.PodFailed && p.Status.Reason == tc.reason
		})
		if !strings.HasPrefix(got.Status.Message, "Pod was rejected: ") || !strings.Contains(got.Status.Message, tc.inMsg) {
			t.Errorf("%s: message %q; want the kubelet's prefix and %q", tc.pod.Name, got.Status.Message, tc.inMsg)
		}
		if cs := k.criContainers(string(got.UID)); len(cs) != 0 {
			t.Errorf("%s: rejected pod has %d containers in the runtime; want none", tc.pod.Name, len(cs))
		}
	}
	for _, name := range []string{"picky", "greedy", "clash"} {
		k.deleteAPIPod(name, nil)
		k.waitAPIGone(name, time.Minute)
	}
	if p, _ := k.apiPod("fits"); p == nil || p.Status.Phase != v1.PodRunning {
		t.Errorf("the pod that fits: %s; want it still Running", podStatusString(p))
	}
}
