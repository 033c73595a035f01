package nodeserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/podhost/podhost/test/kubecluster"
)

// fakeStats serves a summary of one pod and counts the calls.
type fakeStats struct {
	mu    sync.Mutex
	calls int
}

func (f *fakeStats) Summary() (statsapi.Summary, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	n := uint64(7)
	return statsapi.Summary{Node: statsapi.NodeStats{NodeName: "n1", CPU: &statsapi.CPUStats{UsageCoreNanoSeconds: &n}},
		Pods: []statsapi.PodStats{{PodRef: statsapi.PodReference{Name: "web", Namespace: "default", UID: "uid-web"},
			VolumeStats: []statsapi.VolumeStats{{Name: "data"}},
			Containers:  []statsapi.ContainerStats{{Name: "app", CPU: &statsapi.CPUStats{UsageCoreNanoSeconds: &n}, Rootfs: &statsapi.FsStats{}}}}}}, nil
}

func (f *fakeStats) ResourceMetrics() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		f.calls++
		f.mu.Unlock()
		_, _ = io.WriteString(w, "node_cpu_usage_seconds_total 7\n")
	})
}

func (f *fakeStats) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func TestStatsPodsAndHealthz(t *testing.T) {
	c := kubecluster.StartForTest(t, kubecluster.Options{Nodes: []string{"n1"}})
	stats := &fakeStats{}
	pods := func(context.Context) ([]v1.Pod, error) {
		return []v1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}}, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubelet_desired_pods"}))
	s := startNode(t, c, (&fakeLogs{}).logs, &fakeStreams{}, func(o *Options) { o.Stats, o.Pods, o.Metrics = stats, pods, reg })
	ctx := t.Context()

	// reader may get nodes/stats and nodes/metrics only.
	for _, sa := range []string{"reader", "nobody"} {
		if _, err := c.Client.CoreV1().ServiceAccounts("default").Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "stats-reader"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes/stats", "nodes/metrics"}, Verbs: []string{"get"}}}}
	if _, err := c.Client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "stats-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "stats-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: "default"}}}
	if _, err := c.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := func(sa string) string {
		tok, err := c.Client.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tok.Status.Token
	}
	reader, nobody := token("reader"), token("nobody")

	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	apiCert, err := tls.LoadX509KeyPair(c.KubeletClientCertFile, c.KubeletClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	plain := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	withCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{apiCert}}}}
	base := fmt.Sprintf("https://127.0.0.1:%d/", s.Port())
	tests := []struct {
		name   string
		client *http.Client
		token  string
		path   string
		want   int
		body   string
	}{
		{"summary: no credentials", plain, "", "stats/summary", http.StatusUnauthorized, "no client certificate"},
		{"summary: a service account without access", plain, nobody, "stats/summary", http.StatusForbidden, "may not get nodes/stats"},
		{"summary: a service account with nodes/stats", plain, reader, "stats/summary", http.StatusOK, `"nodeName":"n1"`},
		{"summary: the API server's client certificate", withCert, "", "stats/summary", http.StatusOK, `"rootfs"`},
		{"summary: only cpu and memory", withCert, "", "stats/summary?only_cpu_and_memory=true", http.StatusOK, `"usageCoreNanoSeconds":7`},
		{"summary: bad only_cpu_and_memory", withCert, "", "stats/summary?only_cpu_and_memory=x", http.StatusBadRequest, "only_cpu_and_memory"},
		{"metrics: no credentials", plain, "", "metrics/resource", http.StatusUnauthorized, "no client certificate"},
		{"metrics: a service account without access", plain, nobody, "metrics/resource", http.StatusForbidden, "may not get nodes/metrics"},
		{"metrics: a service account with nodes/metrics", plain, reader, "metrics/resource", http.StatusOK, "node_cpu_usage_seconds_total 7"},
		{"node metrics: a service account without access", plain, nobody, "metrics", http.StatusForbidden, "may not get nodes/metrics"},
		{"node metrics: a service account with nodes/metrics", plain, reader, "metrics", http.StatusOK, "kubelet_desired_pods 0"},
		{"pods: a service account with nodes/stats only", plain, reader, "pods", http.StatusForbidden, "may not get nodes/proxy"},
		{"pods: the API server's client certificate", withCert, "", "pods", http.StatusOK, `"kind":"PodList"`},
		{"healthz: no credentials", plain, "", "healthz", http.StatusUnauthorized, "no client certificate"},
		{"healthz: the API server's client certificate", withCert, "", "healthz", http.StatusOK, "ok"},
		{"logs: a service account with nodes/stats only", plain, reader, "containerLogs/default/web/app", http.StatusForbidden, "may not get nodes/proxy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := stats.count()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+tt.path, nil)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := tt.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want || !strings.Contains(string(body), tt.body) {
				t.Fatalf("%d %q; want %d with %q", resp.StatusCode, body, tt.want, tt.body)
			}
			if refused := tt.want == http.StatusUnauthorized || tt.want == http.StatusForbidden; refused && stats.count() != before {
				t.Errorf("a refused request reached the stats")
			}
			if strings.Contains(tt.path, "only_cpu_and_memory=true") {
				var sum statsapi.Summary
				if err := json.Unmarshal(body, &sum); err != nil {
					t.Fatal(err)
				}
				if len(sum.Pods) != 1 || sum.Pods[0].VolumeStats != nil || sum.Pods[0].Containers[0].Rootfs != nil || sum.Pods[0].Containers[0].CPU == nil {
					t.Errorf("only_cpu_and_memory kept %+v", sum.Pods)
				}
			}
		})
	}
}
