package kubenode

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes/fake"
)

func validOptions() Options {
	return Options{
		Client: fake.NewClientset(), NodeName: "n1", RootDir: "/var/lib/podhost",
		RuntimeVersion: func(context.Context) (string, error) { return "memory://1", nil },
		RuntimeReady:   func(context.Context) error { return nil },
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no client", func(o *Options) { o.Client = nil }, "Client: required"},
		{"no name", func(o *Options) { o.NodeName = "" }, "NodeName: required"},
		{"bad name", func(o *Options) { o.NodeName = "N_1" }, `NodeName: "N_1" is not a DNS subdomain`},
		{"bad IP", func(o *Options) { o.Addresses = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0"}} }, "Addresses[0]: InternalIP \"10.0.0\" is not an IP address"},
		{"bad address type", func(o *Options) { o.Addresses = []v1.NodeAddress{{Type: "Nope", Address: "x"}} }, `Addresses[0]: unknown address type "Nope"`},
		{"long hostname", func(o *Options) { o.NodeName = strings.Repeat("a", 64) }, "Addresses: hostname \"aaaa"},
		{"bad port", func(o *Options) { o.DaemonPort = 70000 }, "DaemonPort: 70000 is not a port"},
		{"relative root", func(o *Options) { o.RootDir = "var/lib" }, `RootDir: "var/lib" is not absolute`},
		{"no root", func(o *Options) { o.RootDir = "" }, "RootDir: required"},
		{"bad version", func(o *Options) { o.KubeletVersion = "1.x" }, "KubeletVersion:"},
		{"no runtime version", func(o *Options) { o.RuntimeVersion = nil }, "RuntimeVersion: required"},
		{"no readiness", func(o *Options) { o.RuntimeReady = nil }, "RuntimeReady: required unless Health is set"},
		{"restricted label", func(o *Options) { o.Labels = map[string]string{"node-restriction.kubernetes.io/x": "y"} }, `Labels["node-restriction.kubernetes.io/x"]: a node may not set`},
		{"kubernetes label", func(o *Options) { o.Labels = map[string]string{"node-role.kubernetes.io/worker": ""} }, `Labels["node-role.kubernetes.io/worker"]: NodeRestriction lets a node set only`},
		{"bad label value", func(o *Options) { o.Labels = map[string]string{"example.com/a": "not ok"} }, `Labels["example.com/a"]: value "not ok"`},
		{"negative pods", func(o *Options) { o.MaxPods = -1 }, "MaxPods: -1 is negative"},
		{"renew too slow", func(o *Options) { o.RenewInterval = time.Minute }, "RenewInterval: 1m0s is not shorter than LeaseDuration 40s"},
		{"fractional lease", func(o *Options) { o.LeaseDuration = 1500 * time.Millisecond }, "LeaseDuration: 1.5s is not whole seconds"},
		{"report before status", func(o *Options) { o.ReportFrequency = time.Second }, "ReportFrequency: 1s is shorter than StatusFrequency 10s"},
		{"disk percent", func(o *Options) { o.Thresholds.DiskAvailablePercent = 100 }, "Thresholds.DiskAvailablePercent: 100 is not in [0, 100)"},
		{"negative memory", func(o *Options) { o.Thresholds.MemoryAvailable = resource.MustParse("-1Mi") }, "Thresholds.MemoryAvailable: -1Mi is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := validOptions()
			tt.edit(&o)
			_, err := New(o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v; want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	o := validOptions()
	o.Labels = map[string]string{"node.kubernetes.io/pool": "a", "kubelet.kubernetes.io/x": "y", "topology.kubernetes.io/zone": "z1", "example.com/rack": "r1"}
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	got := a.o
	if got.LeaseDuration != 40*time.Second || got.RenewInterval != 10*time.Second || got.StatusFrequency != 10*time.Second ||
		got.ReportFrequency != 5*time.Minute || got.MaxPods != 110 || got.KubeletVersion != KubeVersion {
		t.Errorf("defaults: lease %v renew %v status %v report %v pods %d version %q", got.LeaseDuration, got.RenewInterval,
			got.StatusFrequency, got.ReportFrequency, got.MaxPods, got.KubeletVersion)
	}
	if len(got.Addresses) != 1 || got.Addresses[0] != (v1.NodeAddress{Type: v1.NodeHostName, Address: "n1"}) {
		t.Errorf("default addresses %v", got.Addresses)
	}
	if got.Thresholds.MemoryAvailable.String() != "100Mi" || got.Thresholds.DiskAvailablePercent != 10 || got.Thresholds.PIDAvailablePercent != 5 {
		t.Errorf("default thresholds %+v", got.Thresholds)
	}
}

func TestNewRefusesARegistryTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	o := validOptions()
	o.Registry = reg
	if _, err := New(o); err != nil {
		t.Fatal(err)
	}
	if _, err := New(o); err == nil || !strings.Contains(err.Error(), "Registry: the node metrics are registered already") {
		t.Errorf("second New on one registry: %v", err)
	}
}
