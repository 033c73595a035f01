package e2e

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// holdMiB is what the hold container keeps in its /dev/shm (shared memory
// counts in its cgroup's working set; the sandbox's /dev/shm is 64 MiB).
const holdMiB = 48

// TestKubeStats runs a pod burning CPU in one container and holding
// memory in another, then reads the node's /stats/summary and
// /metrics/resource through the API server's node proxy (client-go, the
// upstream types and Prometheus' parser), as metrics-server does, and
// checks the numbers against the containers' cgroup files; /metrics,
// /healthz and /pods through the proxy too; and that the endpoint refuses an
// unauthenticated caller and a service account without nodes/stats.
func TestKubeStats(t *testing.T) {
	ip := machineIP(t)
	k := startKubeHostOn(t, ip, "", nil)
	k.create(kubePod("stats", v1.RestartPolicyAlways,
		sh("burn", `trap "exit 0" TERM; while true; do :; done`),
		sh("hold", fmt.Sprintf(`dd if=/dev/zero of=/dev/shm/hold bs=1M count=%d && trap "exit 0" TERM && while true; do sleep 1; done`, holdMiB))))
	pod := k.waitAPIRunning("stats", 90*time.Second)
	ids := containerIDs(pod)
	ctx := t.Context()
	proxy := func(path string) []byte {
		t.Helper()
		b, err := k.cluster.Client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/" + kubeNode + "/proxy/" + path).DoRaw(ctx)
		if err != nil {
			t.Fatalf("GET %s through the API server: %v: %s", path, err, b)
		}
		return b
	}

	// The numbers are gathered every 10 s: wait for a reading where burn
	// has used a second of CPU and hold its memory.
	var sum statsapi.Summary
	var statsPod *statsapi.PodStats
	deadline := time.Now().Add(120 * time.Second)
	for {
		sum = statsapi.Summary{}
		if err := json.Unmarshal(proxy("stats/summary"), &sum); err != nil {
			t.Fatalf("decoding the summary: %v", err)
		}
		statsPod = findPod(sum, "stats")
		burn, hold := findContainer(statsPod, "burn"), findContainer(statsPod, "hold")
		if burn != nil && hold != nil && burn.CPU != nil && *burn.CPU.UsageCoreNanoSeconds >= 1e9 &&
			hold.Memory != nil && *hold.Memory.WorkingSetBytes >= holdMiB<<20 {
			break
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(statsPod)
			t.Fatalf("no summary within 120 s with a second of CPU in burn and %d MiB in hold; last pod stats: %s", holdMiB, b)
		}
		time.Sleep(2 * time.Second)
	}
	burn, hold := findContainer(statsPod, "burn"), findContainer(statsPod, "hold")
	if statsPod.PodRef.UID != string(pod.UID) || statsPod.PodRef.Namespace != "default" {
		t.Errorf("pod ref %+v; want uid %s in default", statsPod.PodRef, pod.UID)
	}
	burnCPU := cgroupCPU(t, ids["burn"])
	if got := *burn.CPU.UsageCoreNanoSeconds; got > burnCPU {
		t.Errorf("burn's CPU %d ns in the summary is more than its cgroup's %d ns read after it", got, burnCPU)
	}
	if got, ws := *hold.Memory.WorkingSetBytes, cgroupWorkingSet(t, ids["hold"]); diff(got, ws) > 16<<20 {
		t.Errorf("hold's working set %d in the summary; its cgroup's is %d", got, ws)
	}
	if statsPod.CPU == nil || *statsPod.CPU.UsageCoreNanoSeconds < *burn.CPU.UsageCoreNanoSeconds || statsPod.Memory == nil || *statsPod.Memory.WorkingSetBytes < holdMiB<<20 {
		t.Errorf("pod cpu %+v memory %+v; want at least burn's CPU and hold's memory", statsPod.CPU, statsPod.Memory)
	}
	if burn.StartTime.IsZero() || burn.Rootfs == nil || burn.Rootfs.UsedBytes == nil {
		t.Errorf("burn started %v, rootfs %+v; want a start time and the writable layer's use", burn.StartTime, burn.Rootfs)
	}
	n := sum.Node
	if n.NodeName != kubeNode || n.CPU == nil || *n.CPU.UsageCoreNanoSeconds < *burn.CPU.UsageCoreNanoSeconds || n.Memory == nil || *n.Memory.WorkingSetBytes < holdMiB<<20 ||
		n.Fs == nil || *n.Fs.CapacityBytes == 0 || n.Runtime == nil || n.Runtime.ImageFs == nil || *n.Runtime.ImageFs.UsedBytes == 0 {
		b, _ := json.Marshal(n)
		t.Errorf("node stats %s; want its name, CPU and memory at least the pod's, its filesystem and the image filesystem", b)
	}

	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(proxy("metrics/resource")))
	if err != nil {
		t.Fatalf("parsing /metrics/resource: %v", err)
	}
	value := func(name string, labels map[string]string) (float64, bool) {
		for _, m := range families[name].GetMetric() {
			match := true
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					match = false
				}
			}
			if match && len(m.GetLabel()) == len(labels) {
				if m.GetTimestampMs() == 0 {
					t.Errorf("%s%v has no timestamp", name, labels)
				}
				if c := m.GetCounter(); c != nil {
					return c.GetValue(), true
				}
				return m.GetGauge().GetValue(), true
			}
		}
		return 0, false
	}
	burnLabels := map[string]string{"container": "burn", "pod": "stats", "namespace": "default"}
	if v, ok := value("container_cpu_usage_seconds_total", burnLabels); !ok || v < 1 || v*1e9 > float64(cgroupCPU(t, ids["burn"])) {
		t.Errorf("container_cpu_usage_seconds_total of burn %v (%v); want at least 1 s and at most its cgroup's", v, ok)
	}
	if v, ok := value("container_memory_working_set_bytes", map[string]string{"container": "hold", "pod": "stats", "namespace": "default"}); !ok || v < holdMiB<<20 {
		t.Errorf("container_memory_working_set_bytes of hold %v (%v); want at least %d MiB", v, ok, holdMiB)
	}
	if v, ok := value("container_start_time_seconds", burnLabels); !ok || v < float64(pod.CreationTimestamp.Unix()-1) {
		t.Errorf("container_start_time_seconds of burn %v (%v); want after the pod's creation %v", v, ok, pod.CreationTimestamp)
	}
	podLabels := map[string]string{"pod": "stats", "namespace": "default"}
	if v, ok := value("pod_cpu_usage_seconds_total", podLabels); !ok || v < 1 {
		t.Errorf("pod_cpu_usage_seconds_total %v (%v); want at least 1 s", v, ok)
	}
	if v, ok := value("pod_memory_working_set_bytes", podLabels); !ok || v < holdMiB<<20 {
		t.Errorf("pod_memory_working_set_bytes %v (%v); want at least %d MiB", v, ok, holdMiB)
	}
	if v, ok := value("node_cpu_usage_seconds_total", nil); !ok || v < 1 {
		t.Errorf("node_cpu_usage_seconds_total %v (%v)", v, ok)
	}
	if v, ok := value("node_memory_working_set_bytes", nil); !ok || v < holdMiB<<20 {
		t.Errorf("node_memory_working_set_bytes %v (%v)", v, ok)
	}
	if m := families["scrape_error"].GetMetric(); len(m) != 1 || m[0].GetGauge().GetValue() != 0 {
		t.Errorf("scrape_error %v; want 0", m)
	}

	if got := string(proxy("metrics")); !strings.Contains(got, `kubelet_desired_pods{static=""} 1`) {
		t.Errorf("/metrics lacks kubelet_desired_pods{static=\"\"} 1:\n%s", got)
	}
	if got := string(proxy("healthz")); got != "ok" {
		t.Errorf("healthz %q; want ok", got)
	}
	var list v1.PodList
	if err := json.Unmarshal(proxy("pods"), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].UID != pod.UID || list.Items[0].Status.Phase != v1.PodRunning {
		t.Errorf("/pods listed %d pods; want stats, running", len(list.Items))
	}

	t.Run("auth", func(t *testing.T) {
		node, err := k.cluster.Client.CoreV1().Nodes().Get(ctx, kubeNode, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ca, err := os.ReadFile(k.cluster.CAFile)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		tok, err := k.cluster.Client.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		base := fmt.Sprintf("https://%s/", net.JoinHostPort(ip.String(), strconv.Itoa(int(node.Status.DaemonEndpoints.KubeletEndpoint.Port))))
		for _, tt := range []struct {
			name, token, path string
			want              int
			body              string
		}{
			{"summary unauthenticated", "", "stats/summary", http.StatusUnauthorized, "no client certificate"},
			{"summary without nodes/stats", tok.Status.Token, "stats/summary", http.StatusForbidden, "may not get nodes/stats"},
			{"metrics unauthenticated", "", "metrics/resource", http.StatusUnauthorized, "no client certificate"},
			{"metrics without nodes/metrics", tok.Status.Token, "metrics/resource", http.StatusForbidden, "may not get nodes/metrics"},
			{"pods without nodes/proxy", tok.Status.Token, "pods", http.StatusForbidden, "may not get nodes/proxy"},
		} {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+tt.path, nil)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want || !strings.Contains(string(body), tt.body) {
				t.Errorf("%s: %d %q; want %d with %q", tt.name, resp.StatusCode, body, tt.want, tt.body)
			}
		}
	})
}

// machineIP is the machine's first IPv4 address that is not loopback,
// where the node's endpoint must listen for the API server's node proxy.
func machineIP(t *testing.T) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.To4()
		}
	}
	t.Fatalf("the machine has no IPv4 address but loopback (%v); the API server's node proxy refuses loopback", addrs)
	return nil
}

func findPod(s statsapi.Summary, name string) *statsapi.PodStats {
	for i := range s.Pods {
		if s.Pods[i].PodRef.Name == name {
			return &s.Pods[i]
		}
	}
	return nil
}

func findContainer(p *statsapi.PodStats, name string) *statsapi.ContainerStats {
	if p == nil {
		return nil
	}
	for i := range p.Containers {
		if p.Containers[i].Name == name {
			return &p.Containers[i]
		}
	}
	return nil
}

func diff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// containerCgroup is the container id's cgroup directory in the cgroup v1
// hierarchy named (cgroup v2: ""), "" when it has none there: below its
// pod cgroup, /kubepods[/burstable|/besteffort]/pod<uid>/<id>, or, for a
// container of a sandbox without one, containerd's k8s.io/<id>.
func containerCgroup(hierarchy, id string) string {
	for _, pattern := range []string{"kubepods/*/" + id, "kubepods/*/*/" + id, "k8s.io/" + id} {
		if m, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", hierarchy, pattern)); len(m) == 1 {
			return m[0]
		}
	}
	return ""
}

// cgroupCPU is the container's CPU time in ns from its cgroup: cgroup
// v1's cpuacct.usage, or v2's cpu.stat usage_usec.
func cgroupCPU(t *testing.T, id string) uint64 {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(containerCgroup("cpuacct", id), "cpuacct.usage")); err == nil {
		return parseUint(t, strings.TrimSpace(string(b)))
	}
	return cgroupStat(t, filepath.Join(containerCgroup("", id), "cpu.stat"), "usage_usec") * 1000
}

// cgroupWorkingSet is the container's usage minus its inactive file
// pages, as the kubelet and containerd count it.
func cgroupWorkingSet(t *testing.T, id string) uint64 {
	t.Helper()
	dir := containerCgroup("memory", id)
	usageFile, statFile, inactive := "memory.usage_in_bytes", "memory.stat", "total_inactive_file"
	if dir == "" {
		dir, usageFile, inactive = containerCgroup("", id), "memory.current", "inactive_file"
	}
	b, err := os.ReadFile(filepath.Join(dir, usageFile))
	if err != nil {
		t.Fatal(err)
	}
	usage, in := parseUint(t, strings.TrimSpace(string(b))), cgroupStat(t, filepath.Join(dir, statFile), inactive)
	return usage - min(usage, in)
}

func cgroupStat(t *testing.T, path, key string) uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == key {
			return parseUint(t, f[1])
		}
	}
	t.Fatalf("%s has no %s", path, key)
	return 0
}

func parseUint(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
