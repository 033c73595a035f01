package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podhost/podhost/test/kubecluster"
)

// burnLimit is the CPU limit of the burning container: its cgroup's CFS
// quota caps what metrics-server may see it use.
const burnLimit = "250m"

// TestKubeTop runs the real metrics-server (hack/metrics-server.sh, as a
// process of the machine behind the API server's aggregation layer) against
// a podhost node, and a pod burning CPU under a CPU limit in one container
// and holding memory in another; `kubectl top node` and `kubectl top pod`
// (real kubectl, through the metrics API) show non-zero numbers, the
// burning container no more CPU than its cgroup's quota allows, the
// holding one the working set of its cgroup, and the node at least the
// pod's. metrics-server reaches the node at its InternalIP and the port of
// its status, verifies its serving certificate against the cluster's CA
// and authenticates with a client certificate that the node reviews for
// nodes/metrics; it needs two scrapes before it answers.
func TestKubeTop(t *testing.T) {
	ip := machineIP(t)
	k := startKubeHostCluster(t, kubecluster.Options{MetricsServer: true, MetricsServerIP: ip}, ip, "", nil)
	burn := sh("burn", `trap "exit 0" TERM; while true; do :; done`)
	burn.Resources.Limits = v1.ResourceList{v1.ResourceCPU: resource.MustParse(burnLimit)}
	k.create(kubePod("top", v1.RestartPolicyAlways, burn,
		sh("hold", fmt.Sprintf(`dd if=/dev/zero of=/dev/shm/hold bs=1M count=%d && trap "exit 0" TERM && while true; do sleep 1; done`, holdMiB))))
	ids := containerIDs(k.waitAPIRunning("top", 90*time.Second))
	ctx := t.Context()

	// kubectl top pod --containers: "POD NAME CPU MEMORY" per container.
	var usage map[string]topRow
	var out string
	poll(t, 3*time.Minute, func() bool {
		var err error
		if out, err = k.cluster.Kubectl(ctx, "top", "pod", "top", "--containers", "--no-headers"); err != nil {
			time.Sleep(2 * time.Second)
			return false
		}
		usage = topColumns(t, out, 1, 2, 3)
		b, h := usage["burn"], usage["hold"]
		if b.milliCPU == 0 || h.bytes < holdMiB<<20 {
			time.Sleep(2 * time.Second)
			return false
		}
		return true
	}, func() string {
		return fmt.Sprintf("kubectl top pod top --containers never showed CPU in burn and %d MiB in hold; last output: %q", holdMiB, out)
	})
	t.Logf("kubectl top pod top --containers:\n%s", out)
	quota := cgroupCPUQuota(t, ids["burn"])
	if cpu := usage["burn"].milliCPU; cpu > quota*11/10+10 {
		t.Errorf("burn uses %dm CPU in kubectl top; its cgroup's quota allows %dm", cpu, quota)
	}
	if got, ws := uint64(usage["hold"].bytes), cgroupWorkingSet(t, ids["hold"]); diff(got, ws) > 16<<20 {
		t.Errorf("hold's memory %d in kubectl top; its cgroup's working set is %d", got, ws)
	}

	// kubectl top pod: the pod's sum.
	out, err := k.cluster.Kubectl(ctx, "top", "pod", "top", "--no-headers")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl top pod top:\n%s", out)
	pod := topColumns(t, out, 0, 1, 2)["top"]
	if pod.milliCPU == 0 || pod.bytes < holdMiB<<20 {
		t.Errorf("kubectl top pod top: %q; want CPU and at least %d MiB", out, holdMiB)
	}

	// kubectl top node: "NAME CPU CPU% MEMORY MEMORY%".
	var node topRow
	poll(t, time.Minute, func() bool {
		if out, err = k.cluster.Kubectl(ctx, "top", "node", kubeNode, "--no-headers"); err != nil {
			time.Sleep(2 * time.Second)
			return false
		}
		node = topColumns(t, out, 0, 1, 3)[kubeNode]
		return true
	}, func() string { return fmt.Sprintf("kubectl top node %s: %q, %v", kubeNode, out, err) })
	t.Logf("kubectl top node:\n%s", out)
	if node.milliCPU == 0 || node.bytes < holdMiB<<20 {
		t.Errorf("kubectl top node: %q; want CPU and at least %d MiB", out, holdMiB)
	}
}

// topRow is one line of kubectl top.
type topRow struct{ milliCPU, bytes int64 }

// topColumns parses kubectl top's lines without headers: the name, CPU
// and memory in the columns given, keyed by name.
func topColumns(t *testing.T, out string, name, cpu, mem int) map[string]topRow {
	t.Helper()
	rows := map[string]topRow{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) <= max(name, cpu, mem) {
			t.Fatalf("kubectl top line %q: want a name, CPU and memory", line)
		}
		c, errC := resource.ParseQuantity(f[cpu])
		m, errM := resource.ParseQuantity(f[mem])
		if errC != nil || errM != nil {
			t.Fatalf("kubectl top line %q: CPU %v, memory %v", line, errC, errM)
		}
		rows[f[name]] = topRow{milliCPU: c.MilliValue(), bytes: m.Value()}
	}
	return rows
}

// cgroupCPUQuota is the container's CPU quota in millicores from its
// cgroup: v1's cpu.cfs_quota_us over cpu.cfs_period_us, or v2's cpu.max.
func cgroupCPUQuota(t *testing.T, id string) int64 {
	t.Helper()
	var quota, period string
	dir := containerCgroup("cpu", id)
	if q, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us")); err == nil {
		p, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
		if err != nil {
			t.Fatal(err)
		}
		quota, period = strings.TrimSpace(string(q)), strings.TrimSpace(string(p))
	} else {
		b, err := os.ReadFile(filepath.Join(containerCgroup("", id), "cpu.max"))
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(b)); len(f) == 2 {
			quota, period = f[0], f[1]
		}
	}
	q, errQ := strconv.ParseInt(quota, 10, 64)
	p, errP := strconv.ParseInt(period, 10, 64)
	if errQ != nil || errP != nil || q <= 0 || p <= 0 {
		t.Fatalf("container %s has no CPU quota in its cgroup (quota %q, period %q)", id, quota, period)
	}
	return q * 1000 / p
}
