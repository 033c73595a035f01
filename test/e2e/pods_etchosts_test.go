package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/test/crisetup"
)

// TestPodEtcHosts reads /etc/hosts inside containers as the upstream
// KubeletManagedEtcHosts and HostAliases specs do: a pod on the pod
// network gets the managed file with its IP and hostname and its host
// aliases, in every container but one that mounts its own /etc/hosts; a
// pod on the node's network gets the node's file under the host-network
// header, with its aliases. With the cluster's DNS configured, the pod's
// FQDN is in its /etc/hosts and ClusterFirst sets its resolv.conf.
func TestPodEtcHosts(t *testing.T) {
	h := startPodHostWith(t, "clusterDNS: [10.96.0.10]\nclusterDomain: cluster.local\n", crisetup.WithPodNetwork())
	aliases := []v1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo.remote", "bar.remote"}}}

	own := sh("own", "cat /etc/hosts")
	own.VolumeMounts = []v1.VolumeMount{{Name: "hosts", MountPath: "/etc/hosts"}}
	pod := busyPod("hosts", v1.RestartPolicyNever, sh("first", "cat /etc/hosts"), sh("second", "cat /etc/hosts"), own,
		sh("dns", "cat /etc/resolv.conf"))
	pod.Spec.HostNetwork = false
	pod.Spec.Hostname = "web-0"
	pod.Spec.Subdomain = "web"
	pod.Spec.HostAliases = aliases
	pod.Spec.Volumes = []v1.Volume{volume("hosts", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/etc/hosts"}})}
	h.apply(pod)

	hostNet := busyPod("hosts-node", v1.RestartPolicyNever, sh("app", "cat /etc/hosts"))
	hostNet.Spec.HostAliases = aliases
	h.apply(hostNet)

	done := h.waitPhase("hosts", v1.PodSucceeded, 90*time.Second)
	for _, c := range []string{"first", "second"} {
		out := h.logsOf("hosts", c)
		want := []string{"# Kubernetes-managed hosts file.\n", "127.0.0.1\tlocalhost\n",
			fmt.Sprintf("%s\tweb-0.web.default.svc.cluster.local\tweb-0\n", done.Status.PodIP), "# Entries added by HostAliases.\n123.45.67.89\tfoo.remote\tbar.remote\n"}
		if !strings.HasPrefix(out, want[0]) {
			t.Errorf("container %s: /etc/hosts does not start with the managed header:\n%s", c, out)
		}
		wantLines(t, "container "+c, out, want...)
	}
	wantLines(t, "resolv.conf of a ClusterFirst pod", h.logsOf("hosts", "dns"), "nameserver 10.96.0.10",
		"search default.svc.cluster.local svc.cluster.local cluster.local", "options ndots:5")
	node, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	if out := h.logsOf("hosts", "own"); out != string(node) {
		t.Errorf("a container mounting its own /etc/hosts got:\n%s\nwant the node's file:\n%s", out, node)
	}

	h.waitPhase("hosts-node", v1.PodSucceeded, 90*time.Second)
	want := "# Kubernetes-managed hosts file (host network).\n" + string(node) +
		"\n# Entries added by HostAliases.\n123.45.67.89\tfoo.remote\tbar.remote\n"
	if out := h.logsOf("hosts-node", "app"); out != want {
		t.Errorf("host-network pod: /etc/hosts is\n%s\nwant\n%s", out, want)
	}
}
