package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/test/crisetup"
)

// TestPodHostnameOverride: as in the upstream "Override hostname of Pod"
// specs, a pod with hostname, subdomain and hostnameOverride has the
// override as its hostname, and /etc/hosts names it alone (no FQDN from
// the subdomain, although the cluster domain is set).
func TestPodHostnameOverride(t *testing.T) {
	h := startPodHostWith(t, "clusterDNS: [10.96.0.10]\nclusterDomain: cluster.local\n", crisetup.WithPodNetwork())
	override := "override.example.host"
	pod := busyPod("override", v1.RestartPolicyNever, sh("app", `echo "hostname=$(hostname)"; cat /etc/hosts`))
	pod.Spec.HostNetwork = false
	pod.Spec.Hostname = "custom-host"
	pod.Spec.Subdomain = "web"
	pod.Spec.HostnameOverride = &override
	h.apply(pod)
	done := h.waitPhase("override", v1.PodSucceeded, 90*time.Second)
	out := h.logsOf("override", "app")
	wantLines(t, "hostnameOverride", out, "hostname="+override+"\n", fmt.Sprintf("%s\t%s\n", done.Status.PodIP, override))
	if strings.Contains(out, "custom-host") || strings.Contains(out, "svc.cluster.local") {
		t.Errorf("hostnameOverride: the hostname or the subdomain's FQDN shows:\n%s", out)
	}
}

// TestPodSetHostnameAsFQDN: as the kubelet, setHostnameAsFQDN makes the
// container's hostname (the UTS name) the pod's FQDN where it has a
// subdomain, and changes nothing without one.
func TestPodSetHostnameAsFQDN(t *testing.T) {
	h := startPodHostWith(t, "clusterDNS: [10.96.0.10]\nclusterDomain: cluster.local\n", crisetup.WithPodNetwork())
	fqdn := true
	for _, tt := range []struct{ name, subdomain, want string }{
		{"fqdn", "web", "fqdn-host.web.default.svc.cluster.local"},
		{"fqdn-nosub", "", "fqdn-host"},
	} {
		pod := busyPod(tt.name, v1.RestartPolicyNever, sh("app", `echo "hostname=$(hostname)"`))
		pod.Spec.HostNetwork = false
		pod.Spec.Hostname, pod.Spec.Subdomain, pod.Spec.SetHostnameAsFQDN = "fqdn-host", tt.subdomain, &fqdn
		h.apply(pod)
		h.waitPhase(tt.name, v1.PodSucceeded, 90*time.Second)
		wantLines(t, tt.name, h.logsOf(tt.name, "app"), "hostname="+tt.want+"\n")
	}
	// A FQDN over 64 characters: the kubelet's error, and no sandbox.
	pod := busyPod("fqdn-long", v1.RestartPolicyNever, sh("app", `hostname`))
	pod.Spec.HostNetwork = false
	pod.Spec.Hostname, pod.Spec.Subdomain, pod.Spec.SetHostnameAsFQDN = strings.Repeat("h", 40), "web", &fqdn
	h.apply(pod)
	poll(t, 60*time.Second, func() bool { return strings.Contains(h.logTail(), "is too long (64 characters is the max") },
		func() string { return "no FQDN error in the host log\n" + h.logTail() })
	if p, ok := h.get("fqdn-long"); !ok || p.Status.Phase != v1.PodPending {
		t.Errorf("pod %s; want Pending", podStatusString(p))
	}
}
