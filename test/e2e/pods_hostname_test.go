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
