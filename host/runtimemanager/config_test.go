package runtimemanager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/supervisor"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func TestResources(t *testing.T) {
	m := &Manager{opts: Options{NodeMemoryBytes: 1 << 30}}
	tests := []struct {
		name      string
		req, lim  v1.ResourceList
		want      *runtimev1.Resources
		qosBefore v1.PodQOSClass
	}{
		{name: "best effort", want: &runtimev1.Resources{CpuShares: 2, OomScoreAdj: 1000}},
		{name: "guaranteed", lim: v1.ResourceList{v1.ResourceCPU: q("500m"), v1.ResourceMemory: q("128Mi")},
			want: &runtimev1.Resources{CpuShares: 512, CpuQuota: 50000, CpuPeriod: 100000, MemoryLimitInBytes: 128 << 20, OomScoreAdj: -997}},
		{name: "burstable", req: v1.ResourceList{v1.ResourceCPU: q("2"), v1.ResourceMemory: q("256Mi")},
			want: &runtimev1.Resources{CpuShares: 2048, OomScoreAdj: 750}},
		{name: "tiny limit", req: v1.ResourceList{v1.ResourceCPU: q("1m")}, lim: v1.ResourceList{v1.ResourceCPU: q("1m")},
			want: &runtimev1.Resources{CpuShares: 2, CpuQuota: 1000, CpuPeriod: 100000, OomScoreAdj: 999}},
	}
	for _, tt := range tests {
		pod := newPod("r", "app")
		pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: tt.req, Limits: tt.lim}
		got := m.resources(pod, &pod.Spec.Containers[0])
		if got.GetCpuShares() != tt.want.GetCpuShares() || got.GetCpuQuota() != tt.want.GetCpuQuota() || got.GetCpuPeriod() != tt.want.GetCpuPeriod() ||
			got.GetMemoryLimitInBytes() != tt.want.GetMemoryLimitInBytes() || got.GetOomScoreAdj() != tt.want.GetOomScoreAdj() {
			t.Errorf("%s: got %v; want %v", tt.name, got, tt.want)
		}
	}
}

func TestDNSConfig(t *testing.T) {
	node := ParseResolvConf([]byte("# node\nnameserver 192.0.2.53\nsearch corp.example\noptions edns0 ndots:2\n"))
	m := &Manager{opts: Options{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", NodeResolvConf: &node}}
	pod := newPod("d", "app")
	got := m.dnsConfig(pod)
	if !slices.Equal(got.GetServers(), []string{"10.96.0.10"}) ||
		!slices.Equal(got.GetSearches(), []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"}) ||
		!slices.Equal(got.GetOptions(), []string{"ndots:5"}) {
		t.Errorf("ClusterFirst: got %v", got)
	}
	pod.Spec.HostNetwork = true
	if got := m.dnsConfig(pod); !slices.Equal(got.GetServers(), []string{"192.0.2.53"}) || !slices.Equal(got.GetOptions(), []string{"edns0", "ndots:2"}) {
		t.Errorf("ClusterFirst with host network falls back to the node: got %v", got)
	}
	pod.Spec.DNSPolicy = v1.DNSNone
	pod.Spec.DNSConfig = &v1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: ptr("1")}}}
	if got := m.dnsConfig(pod); !slices.Equal(got.GetServers(), []string{"1.1.1.1"}) || len(got.GetSearches()) != 0 || !slices.Equal(got.GetOptions(), []string{"ndots:1"}) {
		t.Errorf("None: got %v", got)
	}
}

func TestPullPolicyDefaults(t *testing.T) {
	tests := map[string]runtimev1.PullPolicy{
		"busybox":                    runtimev1.PullPolicy_PULL_POLICY_ALWAYS,
		"busybox:latest":             runtimev1.PullPolicy_PULL_POLICY_ALWAYS,
		"busybox:1.36":               runtimev1.PullPolicy_PULL_POLICY_IF_NOT_PRESENT,
		"localhost:5000/app":         runtimev1.PullPolicy_PULL_POLICY_ALWAYS,
		"localhost:5000/app:v1":      runtimev1.PullPolicy_PULL_POLICY_IF_NOT_PRESENT,
		"app@sha256:0123456789abcde": runtimev1.PullPolicy_PULL_POLICY_IF_NOT_PRESENT,
	}
	for image, want := range tests {
		if got := pullPolicy(&v1.Container{Image: image}); got != want {
			t.Errorf("pullPolicy(%q) = %v; want %v", image, got, want)
		}
	}
}

func TestCallError(t *testing.T) {
	tests := []struct {
		in   error
		want error
	}{
		{status.Error(codes.NotFound, "x"), ErrNotFound},
		{status.Error(codes.FailedPrecondition, "x"), ErrRejected},
		{status.Error(codes.InvalidArgument, "x"), ErrRejected},
		{status.Error(codes.Unavailable, "x"), ErrUncertain},
		{status.Error(codes.DeadlineExceeded, "x"), ErrUncertain},
		{status.Error(codes.Internal, "x"), ErrUncertain},
		{status.Error(codes.Canceled, "x"), context.Canceled},
		{fmt.Errorf("plugin %q: %w: %w", "rt", supervisor.ErrPluginExited, status.Error(codes.Unavailable, "eof")), supervisor.ErrPluginExited},
		{context.DeadlineExceeded, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		got := callError("op", tt.in)
		if !errors.Is(got, tt.want) {
			t.Errorf("callError(%v) = %v; want it to wrap %v", tt.in, got, tt.want)
		}
	}
}

func TestFindLog(t *testing.T) {
	root := t.TempDir()
	write := func(rel string, age time.Duration) {
		p := filepath.Join(root, "pods", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		mt := epoch.Add(-age)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	write("default_web_old/app/0.log", time.Hour)
	write("default_web_new/app/0.log", time.Minute)
	write("default_web_new/app/1.log", time.Minute)
	write("default_web_new/side/0.log", 0)
	write("default_webby_x/app/9.log", 0)
	got, err := FindLog(root, "default", "web", "app")
	if want := filepath.Join(root, "pods", "default_web_new", "app", "1.log"); err != nil || got != want {
		t.Errorf("FindLog app: got %q, %v; want %q", got, err, want)
	}
	if _, err := FindLog(root, "default", "web", ""); !errors.Is(err, ErrNoLog) {
		t.Errorf("FindLog without a container of a two-container pod: got %v; want ErrNoLog", err)
	}
	if got, err := FindLog(root, "default", "webby", ""); err != nil || filepath.Base(got) != "9.log" {
		t.Errorf("FindLog of a one-container pod: got %q, %v", got, err)
	}
	if _, err := FindLog(root, "default", "web", "nope"); !errors.Is(err, ErrNoLog) {
		t.Errorf("FindLog of an unknown container: got %v; want ErrNoLog", err)
	}
}
