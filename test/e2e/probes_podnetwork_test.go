package e2e

import (
	"fmt"
	"net/http"
	"net/netip"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/podhost/podhost/test/crisetup"
)

// TestProbePodNetwork runs busybox httpd in a pod with its own network
// namespace (no hostNetwork) on a containerd with a CNI bridge network:
// the pod's status shows its IP from the pod subnet, an httpGet readiness
// probe on a named port makes it Ready once the page exists, and a
// tcpSocket liveness probe, aimed at the pod IP, restarts the container
// once its first instance stopped the server (an emptyDir remembers that
// it ran, so the second one keeps serving): restartCount 1, an Unhealthy
// event naming the pod IP, and Ready again, with the same IP.
func TestProbePodNetwork(t *testing.T) {
	h := startPodHostWith(t, "", crisetup.WithPodNetwork())
	c := sh("web", `mkdir -p /www; httpd -f -p 8080 -h /www & server=$!
sleep 3; echo ok > /www/healthz
if [ ! -e /state/ran ]; then touch /state/ran; sleep 5; kill $server; fi
while true; do sleep 1; done`)
	c.Ports = []v1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	c.VolumeMounts = []v1.VolumeMount{{Name: "state", MountPath: "/state"}}
	grace := int64(1)
	c.ReadinessProbe = &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
		PeriodSeconds: 1, TimeoutSeconds: 5,
	}
	c.LivenessProbe = &v1.Probe{
		ProbeHandler:        v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
		InitialDelaySeconds: 2, PeriodSeconds: 1, TimeoutSeconds: 5, FailureThreshold: 2, TerminationGracePeriodSeconds: &grace,
	}
	pod := busyPod("podnet", v1.RestartPolicyAlways, c)
	pod.Spec.HostNetwork = false
	pod.Spec.Volumes = []v1.Volume{volume("state", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})}
	h.apply(pod)

	ready := h.waitPod("podnet", 90*time.Second, "Ready True", func(p *v1.Pod) bool { return podCondition(p, v1.PodReady) == v1.ConditionTrue })
	ip, err := netip.ParseAddr(ready.Status.PodIP)
	if err != nil || !h.ctrd.PodSubnet.Contains(ip) {
		t.Fatalf("podIP %q (%v); want an address of the pod subnet %v\n%s", ready.Status.PodIP, err, h.ctrd.PodSubnet, podStatusString(ready))
	}
	if len(ready.Status.PodIPs) != 1 || ready.Status.PodIPs[0].IP != ready.Status.PodIP {
		t.Errorf("podIPs %+v; want [%s]", ready.Status.PodIPs, ready.Status.PodIP)
	}
	resp, err := http.Get(fmt.Sprintf("http://%s:8080/healthz", ip))
	if err != nil {
		t.Fatalf("the host does not reach the pod at its IP: %v", err)
	}
	resp.Body.Close()

	restarted := h.waitPod("podnet", 90*time.Second, "restarted and Ready again", func(p *v1.Pod) bool {
		cs := containerStatus(p, "web")
		return cs != nil && cs.RestartCount >= 1 && podCondition(p, v1.PodReady) == v1.ConditionTrue
	})
	if cs := containerStatus(restarted, "web"); cs.RestartCount != 1 {
		t.Errorf("restartCount %d; want 1\n%s", cs.RestartCount, podStatusString(restarted))
	}
	if restarted.Status.PodIP != ready.Status.PodIP {
		t.Errorf("podIP changed over a container restart: %s, then %s", ready.Status.PodIP, restarted.Status.PodIP)
	}
	evs := h.events("podnet")
	if !hasEvent(evs, "Unhealthy", fmt.Sprintf("Liveness probe failed: dial tcp %s:8080", ip)) {
		t.Errorf("no Unhealthy event of the tcpSocket probe at the pod IP %s:\n%s", ip, eventsString(evs))
	}
	if !hasEvent(evs, "Killing", "Container web failed liveness probe, will be restarted") {
		t.Errorf("no liveness Killing event:\n%s", eventsString(evs))
	}
}
