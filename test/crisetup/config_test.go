package crisetup

import (
	"strings"
	"testing"
)

// defaultConfig is an excerpt of `containerd config default` of containerd
// 1.6.20, holding every key Config rewrites.
const defaultConfig = `disabled_plugins = []
root = "/var/lib/containerd"
state = "/run/containerd"
version = 2

[grpc]
  address = "/run/containerd/containerd.sock"
  tcp_address = ""

[ttrpc]
  address = ""

[plugins]

  [plugins."io.containerd.grpc.v1.cri"]
    netns_mounts_under_state_dir = false
    restrict_oom_score_adj = false
    sandbox_image = "registry.k8s.io/pause:3.6"
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/opt/cni/bin"
      conf_dir = "/etc/cni/net.d"

    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"

    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = ""

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          BinaryName = ""
          Root = ""

  [plugins."io.containerd.internal.v1.opt"]
    path = "/opt/containerd"
`

func TestConfig(t *testing.T) {
	l, err := NewLayout("/tmp/x")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Config([]byte(defaultConfig), l, "podhost.local/pause:1")
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{
		`root = "/tmp/x/root"`,
		`state = "/tmp/x/state"`,
		`  address = "/tmp/x/containerd.sock"`,
		`    restrict_oom_score_adj = true`,
		`    sandbox_image = "podhost.local/pause:1"`,
		`    netns_mounts_under_state_dir = true`,
		`      bin_dir = "/tmp/x/cni/bin"`,
		`      conf_dir = "/tmp/x/cni/net.d"`,
		`          Root = "/tmp/x/runc"`,
		`    path = "/tmp/x/opt"`,
		`      config_path = "/tmp/x/certs.d"`,
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("config lacks %q", want)
		}
	}
	for _, system := range []string{"/var/lib/containerd", "/run/containerd", "/etc/cni", "/opt/"} {
		if strings.Contains(got, system) {
			t.Errorf("config still names %s:\n%s", system, got)
		}
	}
	// The ttrpc address is not the gRPC one.
	if !strings.Contains(got, "[ttrpc]\n  address = \"\"\n") {
		t.Errorf("ttrpc address was rewritten:\n%s", got)
	}
}

func TestConfigRejectsUnexpectedShape(t *testing.T) {
	l, _ := NewLayout("/tmp/x")
	short := strings.Replace(defaultConfig, "restrict_oom_score_adj = false\n", "", 1)
	_, err := Config([]byte(short), l, "p:1")
	if err == nil || !strings.Contains(err.Error(), "restrict_oom_score_adj found 0 times") {
		t.Errorf("err = %v, want one naming restrict_oom_score_adj", err)
	}
}

func TestNewLayoutRejectsLongDir(t *testing.T) {
	if _, err := NewLayout("/" + strings.Repeat("d", 100)); err == nil {
		t.Error("NewLayout accepted a dir whose socket path is too long")
	}
}

func TestParentPID(t *testing.T) {
	ppid, ok := parentPID([]byte("123 (odd) name)) S 45 123 123 0 -1"))
	if !ok || ppid != 45 {
		t.Errorf("parentPID = %d, %v; want 45, true", ppid, ok)
	}
}

func TestIsShimOf(t *testing.T) {
	shim := process{argv: []string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "abc", "-address", "/tmp/x/containerd.sock"}}
	if !isShimOf(shim, "/tmp/x/containerd.sock") {
		t.Error("shim of the instance not recognized")
	}
	if isShimOf(shim, "/run/containerd/containerd.sock") {
		t.Error("shim of another containerd taken for ours")
	}
	if isShimOf(process{argv: []string{"sleep", "-address", "/tmp/x/containerd.sock"}}, "/tmp/x/containerd.sock") {
		t.Error("non-shim taken for a shim")
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/tmp/a\040b`); got != "/tmp/a b" {
		t.Errorf("unescapeMount = %q", got)
	}
}
