package runtimemanager

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	kptr "k8s.io/utils/ptr"
)

// TestEtcHosts checks the pod's /etc/hosts as the kubelet writes it: the
// file of a pod on the pod network, with its FQDN and host aliases; the
// node's file under its own header for a pod on the node's network; no
// file for a container that mounts /etc/hosts itself or a pod without an
// IP yet.
func TestEtcHosts(t *testing.T) {
	root := t.TempDir()
	nodeHosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(nodeHosts, []byte("127.0.0.1\tlocalhost\n192.0.2.7\tnode1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := nodeHostsFile
	nodeHostsFile = nodeHosts
	t.Cleanup(func() { nodeHostsFile = old })
	m := &Manager{logRoot: root, opts: Options{ClusterDomain: "cluster.local"}}
	aliases := []v1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"foo.local", "bar.local"}}, {IP: "fd00::1", Hostnames: []string{"baz"}}}

	read := func(pod *v1.Pod, c *v1.Container, ip string) (string, bool) {
		t.Helper()
		mnt, err := m.etcHostsMount(pod, c, ip)
		if err != nil {
			t.Fatalf("etcHostsMount: %v", err)
		}
		if mnt == nil {
			return "", false
		}
		if mnt.GetContainerPath() != "/etc/hosts" || mnt.GetReadonly() {
			t.Errorf("mount %v; want a writable mount at /etc/hosts", mnt)
		}
		if want := filepath.Join(root, "pods", string(pod.UID), "etc-hosts"); mnt.GetHostPath() != want {
			t.Errorf("host path %s; want %s", mnt.GetHostPath(), want)
		}
		b, err := os.ReadFile(mnt.GetHostPath())
		if err != nil {
			t.Fatal(err)
		}
		return string(b), true
	}

	pod := newPod("web-0", "app", "side")
	pod.Spec.Hostname = "web-0"
	pod.Spec.Subdomain = "web"
	pod.Spec.HostAliases = aliases
	got, ok := read(pod, &pod.Spec.Containers[0], "10.88.0.5")
	want := "# Kubernetes-managed hosts file.\n" +
		"127.0.0.1\tlocalhost\n" +
		"::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\n" +
		"fe00::0\tip6-mcastprefix\n" +
		"fe00::1\tip6-allnodes\n" +
		"fe00::2\tip6-allrouters\n" +
		"10.88.0.5\tweb-0.web.default.svc.cluster.local\tweb-0\n" +
		"\n# Entries added by HostAliases.\n" +
		"10.1.2.3\tfoo.local\tbar.local\n" +
		"fd00::1\tbaz\n"
	if !ok || got != want {
		t.Errorf("pod network, subdomain, aliases:\n%s\nwant:\n%s", got, want)
	}

	plain := newPod("plain", "app")
	if got, ok := read(plain, &plain.Spec.Containers[0], "10.88.0.6"); !ok || !strings.Contains(got, "10.88.0.6\tplain\n") || strings.Contains(got, "HostAliases") {
		t.Errorf("plain pod:\n%s", got)
	}
	if _, ok := read(plain, &plain.Spec.Containers[0], ""); ok {
		t.Error("a pod on the pod network without an IP got a hosts file")
	}

	// hostnameOverride is the whole name: no FQDN from the subdomain.
	override := newPod("web-1", "app")
	override.Spec.Hostname, override.Spec.Subdomain = "web-1", "web"
	override.Spec.HostnameOverride = kptr.To("override.example.host")
	if got, ok := read(override, &override.Spec.Containers[0], "10.88.0.8"); !ok || !strings.Contains(got, "10.88.0.8\toverride.example.host\n") || strings.Contains(got, "svc") {
		t.Errorf("hostnameOverride:\n%s", got)
	}

	hostNet := newPod("hostnet", "app")
	hostNet.Spec.HostNetwork = true
	hostNet.Spec.HostAliases = aliases[:1]
	want = "# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n192.0.2.7\tnode1\n" +
		"\n# Entries added by HostAliases.\n10.1.2.3\tfoo.local\tbar.local\n"
	if got, ok := read(hostNet, &hostNet.Spec.Containers[0], ""); !ok || got != want {
		t.Errorf("host network:\n%s\nwant:\n%s", got, want)
	}

	if err := m.removePodFiles(pod.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "pods", string(pod.UID))); !os.IsNotExist(err) {
		t.Errorf("the pod's directory after its files were removed: %v; want it gone", err)
	}

	own := newPod("own", "app")
	own.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "h", MountPath: "/etc/hosts/"}}
	if _, ok := read(own, &own.Spec.Containers[0], "10.88.0.7"); ok {
		t.Error("a container that mounts /etc/hosts itself got the managed file")
	}
}

// TestPodHostname: hostnameOverride, else hostname, else the pod's name,
// cut to 63 characters without a trailing '-' or '.', as the kubelet's.
func TestPodHostname(t *testing.T) {
	long := strings.Repeat("a", 62) + ".b"
	tests := []struct {
		name, hostname string
		override       *string
		want           string
	}{
		{"web-0", "", nil, "web-0"},
		{"web-0", "custom", nil, "custom"},
		{"web-0", "custom", kptr.To("override.example.host"), "override.example.host"},
		{"web-0", "", kptr.To("override-host"), "override-host"},
		{"web-0", "", kptr.To(long), strings.Repeat("a", 62)},
		{strings.Repeat("p", 70), "", nil, strings.Repeat("p", 63)},
	}
	for _, tt := range tests {
		pod := newPod(tt.name, "app")
		pod.Spec.Hostname, pod.Spec.HostnameOverride = tt.hostname, tt.override
		if got := podHostname(pod); got != tt.want {
			t.Errorf("podHostname(name %q, hostname %q, override %v) = %q; want %q", tt.name, tt.hostname, tt.override, got, tt.want)
		}
	}
}

// TestKernelHostname: setHostnameAsFQDN true makes the sandbox's
// hostname <hostname>.<subdomain>.<namespace>.svc.<cluster domain>, as
// the kubelet's; without a subdomain, a cluster domain, or with a
// hostnameOverride, or false, it is the plain hostname; over 64
// characters it is the kubelet's error.
func TestKernelHostname(t *testing.T) {
	tests := []struct {
		name, hostname, subdomain, domain string
		fqdn                              *bool
		override                          *string
		want, wantErr                     string
	}{
		{"web-0", "", "svc1", "cluster.local", kptr.To(true), nil, "web-0.svc1.default.svc.cluster.local", ""},
		{"web-0", "h", "svc1", "cluster.local", kptr.To(true), nil, "h.svc1.default.svc.cluster.local", ""},
		{"web-0", "", "svc1", "cluster.local", kptr.To(false), nil, "web-0", ""},
		{"web-0", "", "svc1", "cluster.local", nil, nil, "web-0", ""},
		{"web-0", "", "", "cluster.local", kptr.To(true), nil, "web-0", ""},
		{"web-0", "", "svc1", "", kptr.To(true), nil, "web-0", ""},
		{"web-0", "", "svc1", "cluster.local", kptr.To(true), kptr.To("over"), "over", ""},
		{strings.Repeat("p", 40), "", "svc1", "cluster.local", kptr.To(true), nil, "",
			"FQDN " + strings.Repeat("p", 40) + ".svc1.default.svc.cluster.local is too long (64 characters is the max, 71 characters requested)"},
	}
	for _, tt := range tests {
		m := &Manager{opts: Options{ClusterDomain: tt.domain}}
		pod := newPod(tt.name, "app")
		pod.Namespace = "default"
		pod.Spec.Hostname, pod.Spec.Subdomain, pod.Spec.SetHostnameAsFQDN, pod.Spec.HostnameOverride = tt.hostname, tt.subdomain, tt.fqdn, tt.override
		got, err := m.kernelHostname(pod)
		if got != tt.want || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("kernelHostname(%s, hostname %q, subdomain %q, domain %q, fqdn %v, override %v) = %q, %v; want %q, %q",
				tt.name, tt.hostname, tt.subdomain, tt.domain, tt.fqdn, tt.override, got, err, tt.want, tt.wantErr)
		}
		if cfg := m.sandboxConfig(pod, 0); err == nil && cfg.GetHostname() != tt.want {
			t.Errorf("sandbox hostname %q; want %q", cfg.GetHostname(), tt.want)
		}
	}
}
