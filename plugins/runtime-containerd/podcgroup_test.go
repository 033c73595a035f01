package main

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestPodCgroupPath(t *testing.T) {
	uid := "0b5c4e5e-6f4a-4c55-9d1e-6f3c0e6a9b1a"
	for qos, want := range map[string]string{
		"Guaranteed": "/kubepods/pod" + uid,
		"Burstable":  "/kubepods/burstable/pod" + uid,
		"BestEffort": "/kubepods/besteffort/pod" + uid,
	} {
		if got, err := podCgroupPath(qos, uid); err != nil || got != want {
			t.Errorf("podCgroupPath(%s): got %q, %v; want %q", qos, got, err, want)
		}
	}
	for _, tt := range []struct{ qos, uid, want string }{
		{"burstable", uid, "qos_class"},
		{"", uid, "qos_class"},
		{"Burstable", "", "pod_cgroup"},
		{"Burstable", "..", "pod_cgroup"},
		{"Burstable", "../../etc", "pod_cgroup"},
		{"Burstable", "a/b", "pod_cgroup"},
		{"Burstable", ".hidden", "pod_cgroup"},
		{"Burstable", "a b", "pod_cgroup"},
		{"Burstable", strings.Repeat("a", 129), "pod_cgroup"},
	} {
		_, err := podCgroupPath(tt.qos, tt.uid)
		if !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("podCgroupPath(%q, %q): got %v; want INVALID_ARGUMENT naming %s", tt.qos, tt.uid, err, tt.want)
		}
	}
}

func TestCheckPodCgroupResources(t *testing.T) {
	for _, ok := range []Resources{{}, {CPUQuota: -1, MemoryLimitInBytes: -1}, {CPUShares: 2, CPUPeriod: 100000, CPUQuota: 50000, MemoryLimitInBytes: 1 << 20}} {
		if err := checkPodCgroupResources(ok); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
	for field, bad := range map[string]Resources{
		"cpu_shares": {CPUShares: -1}, "cpu_period": {CPUPeriod: -1},
		"cpu_quota": {CPUQuota: -2}, "memory_limit_in_bytes": {MemoryLimitInBytes: -2},
	} {
		if err := checkPodCgroupResources(bad); !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), field) {
			t.Errorf("%+v: got %v; want INVALID_ARGUMENT naming %s", bad, err, field)
		}
	}
}

func TestSharesToWeight(t *testing.T) {
	for shares, want := range map[int64]uint64{0: 1, 2: 1, 1024: 39, 102: 4, 262144: 10000, 1 << 20: 10000} {
		if got := sharesToWeight(shares); got != want {
			t.Errorf("sharesToWeight(%d) = %d; want %d", shares, got, want)
		}
	}
	for _, tt := range []struct {
		quota, period int64
		want          string
	}{{0, 0, "max 100000"}, {-1, 50000, "max 50000"}, {25000, 0, "25000 100000"}, {150000, 100000, "150000 100000"}} {
		if got := cpuMax(tt.quota, tt.period); got != tt.want {
			t.Errorf("cpuMax(%d, %d) = %q; want %q", tt.quota, tt.period, got, tt.want)
		}
	}
}

// fakeCgroupFS is a directory laid out as a cgroup file system: v1 with
// the given hierarchies, or v2.
func fakeCgroupFS(t *testing.T, v2 bool, hierarchies ...string) cgroupFS {
	root := t.TempDir()
	if v2 {
		writeTestFile(t, filepath.Join(root, "cgroup.controllers"), "cpu memory pids")
	}
	for _, h := range hierarchies {
		if err := os.Mkdir(filepath.Join(root, h), 0o755); err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, filepath.Join(root, h, "cgroup.procs"), "")
	}
	return cgroupFS{root: root}
}

func writeTestFile(t *testing.T, name, value string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(value), 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantFiles(t *testing.T, root string, want map[string]string) {
	t.Helper()
	for name, value := range want {
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil || string(got) != value {
			t.Errorf("%s: got %q (%v); want %q", name, got, err, value)
		}
	}
}

func TestCgroupFSv1(t *testing.T) {
	fs := fakeCgroupFS(t, false, "cpu", "memory", "pids")
	p := "/kubepods/burstable/podu1"
	if err := fs.create(p, Resources{CPUShares: 512, CPUPeriod: 100000, CPUQuota: 50000, MemoryLimitInBytes: 64 << 20, OOMScoreAdj: 5}); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, fs.root, map[string]string{
		"cpu" + p + "/cpu.shares": "512", "cpu" + p + "/cpu.cfs_period_us": "100000", "cpu" + p + "/cpu.cfs_quota_us": "50000",
		"memory" + p + "/memory.limit_in_bytes": "67108864",
	})
	if _, err := os.Stat(filepath.Join(fs.root, "pids", p)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pids hierarchy: got %v; want no pod cgroup (runc makes it)", err)
	}
	if err := fs.update(p, Resources{CPUShares: 0, CPUQuota: 0, MemoryLimitInBytes: 0}); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, fs.root, map[string]string{
		"cpu" + p + "/cpu.shares": "512", "cpu" + p + "/cpu.cfs_period_us": "100000", "cpu" + p + "/cpu.cfs_quota_us": "-1",
		"memory" + p + "/memory.limit_in_bytes": "-1",
	})
	if err := fs.update("/kubepods/burstable/podother", Resources{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("update of a missing pod cgroup: got %v; want not exist", err)
	}
	// runc made the pod's directory in the other hierarchies.
	if err := os.MkdirAll(filepath.Join(fs.root, "pids", p), 0o755); err != nil {
		t.Fatal(err)
	}
	// A plain directory is no cgroup: its files go first.
	for _, h := range []string{"cpu", "memory"} {
		files, _ := filepath.Glob(filepath.Join(fs.root, h, p, "*"))
		for _, f := range files {
			_ = os.Remove(f)
		}
	}
	for range 2 {
		if err := fs.remove(t.Context(), p); err != nil {
			t.Fatalf("remove: %v", err)
		}
	}
	for _, h := range []string{"cpu", "memory", "pids"} {
		if _, err := os.Stat(filepath.Join(fs.root, h, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s%s after remove: %v", h, p, err)
		}
		if _, err := os.Stat(filepath.Join(fs.root, h, "/kubepods/burstable")); h != "pids" && err != nil {
			t.Errorf("%s/kubepods/burstable after remove: %v; want it kept", h, err)
		}
	}
}

func TestCgroupFSv1RefusesAHierarchyNotMounted(t *testing.T) {
	fs := fakeCgroupFS(t, false, "memory")
	err := fs.create("/kubepods/podu1", Resources{})
	if err == nil || !strings.Contains(err.Error(), "hierarchy cpu") {
		t.Errorf("create without a cpu hierarchy: got %v; want it named", err)
	}
	if _, err := os.Stat(filepath.Join(fs.root, "cpu")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cpu directory: %v; want none made", err)
	}
}

func TestCgroupFSv2(t *testing.T) {
	fs := fakeCgroupFS(t, true)
	p := "/kubepods/besteffort/podu2"
	if err := fs.create(p, Resources{CPUShares: 2, MemoryLimitInBytes: 0}); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, fs.root, map[string]string{
		"cgroup.subtree_control": "+cpu +memory", "kubepods/cgroup.subtree_control": "+cpu +memory",
		"kubepods/besteffort/cgroup.subtree_control": "+cpu +memory",
		p + "/cpu.weight": "1", p + "/cpu.max": "max 100000", p + "/memory.max": "max",
	})
	if _, err := os.Stat(filepath.Join(fs.root, p, "cgroup.subtree_control")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the pod cgroup's own subtree_control: %v; want it left to runc", err)
	}
	if err := fs.update(p, Resources{CPUShares: 1024, CPUQuota: 20000, CPUPeriod: 50000, MemoryLimitInBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, fs.root, map[string]string{p + "/cpu.weight": "39", p + "/cpu.max": "20000 50000", p + "/memory.max": "1048576"})

	g := fakeCgroupFS(t, true)
	if err := g.create("/kubepods/podu3", Resources{CPUShares: 1024}); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, g.root, map[string]string{"cgroup.subtree_control": "+cpu +memory", "kubepods/cgroup.subtree_control": "+cpu +memory", "kubepods/podu3/cpu.weight": "39"})
}

func TestApplyWritesUndoesWhatItWroteWhenOneFails(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	writeTestFile(t, a, "old-a\n")
	writeTestFile(t, b, "old-b")
	err := applyWrites([]cgroupWrite{{a, "new-a"}, {b, "new-b"}, {filepath.Join(dir, "missing", "c"), "c"}})
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("got %v; want the failed write's error", err)
	}
	wantFiles(t, dir, map[string]string{"a": "old-a", "b": "old-b"})
}

func TestSystemdCgroup(t *testing.T) {
	config := func(defaultRuntime, systemdOf string) string {
		return `{"containerd":{"defaultRuntimeName":"` + defaultRuntime + `","runtimes":{"runc":{"options":{"SystemdCgroup":false}},"` + systemdOf + `":{"options":{"SystemdCgroup":true}}}},"systemdCgroup":false}`
	}
	for _, tt := range []struct {
		name, config, handler string
		want, known           bool
	}{
		{"default runtime cgroupfs", config("runc", "sd"), "", false, true},
		{"default runtime systemd", config("sd", "sd"), "", true, true},
		{"handler systemd", config("runc", "sd"), "sd", true, true},
		{"handler cgroupfs", config("sd", "sd"), "runc", false, true},
		{"unknown handler", config("sd", "sd"), "kata", false, false},
		{"runtime v1 systemd", `{"systemdCgroup":true}`, "", true, false},
		{"no config", "", "", false, false},
		{"unreadable config", "{", "", false, false},
	} {
		got, err := systemdCgroup(tt.config, tt.handler)
		if got != tt.want || (err == nil) != tt.known {
			t.Errorf("%s: got %v, %v; want %v, known %v", tt.name, got, err, tt.want, tt.known)
		}
	}
}

func TestSandboxConfigToCRIWithAPodCgroup(t *testing.T) {
	spec := SandboxSpec{Name: "web", Namespace: "ns", UID: "u1", CgroupParent: "/ignored", Labels: map[string]string{"a": "b"},
		PodCgroup: &PodCgroup{QOSClass: "Burstable", Resources: Resources{CPUShares: 100}}}
	got := sandboxConfigToCRI(spec)
	if got.GetLinux().GetCgroupParent() != "/kubepods/burstable/podu1" {
		t.Errorf("cgroup parent: got %q; want /kubepods/burstable/podu1", got.GetLinux().GetCgroupParent())
	}
	if want := map[string]string{"a": "b", labelPodCgroupQOS: "Burstable"}; !maps.Equal(got.GetLabels(), want) {
		t.Errorf("labels: got %v; want %v", got.GetLabels(), want)
	}
	if len(spec.Labels) != 1 {
		t.Errorf("the host's labels changed: %v", spec.Labels)
	}
	if hl := hostLabels(got.GetLabels()); !maps.Equal(hl, spec.Labels) {
		t.Errorf("labels returned to the host: got %v; want %v", hl, spec.Labels)
	}
}

func TestContainerResourcesToCRI(t *testing.T) {
	for _, tt := range []struct {
		in   Resources
		want *criapi.LinuxContainerResources
	}{
		{Resources{CPUPeriod: 100000, CPUQuota: 50000, CPUShares: 512, MemoryLimitInBytes: 1 << 20, OOMScoreAdj: 900},
			&criapi.LinuxContainerResources{CpuPeriod: 100000, CpuQuota: 50000, CpuShares: 512, MemoryLimitInBytes: 1 << 20}},
		{Resources{CPUShares: 2}, &criapi.LinuxContainerResources{CpuQuota: -1, CpuShares: 2, MemoryLimitInBytes: -1}},
	} {
		if got := containerResourcesToCRI(tt.in); !proto.Equal(got, tt.want) {
			t.Errorf("%+v: got %v; want %v", tt.in, got, tt.want)
		}
	}
}

// The QoS cgroups get the kubelet's CPU weights as pod cgroups come and
// go: besteffort the least, burstable the sum of its pods' shares (at
// least 2), on cgroup v1 and v2.
func TestQOSShares(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "v1", true: "v2"}[v2], func(t *testing.T) {
			r := newCRIRuntime(testLogger())
			r.cgroups = fakeCgroupFS(t, v2, "cpu", "memory")
			file := func(qos string) string {
				if v2 {
					return "kubepods/" + qos + "/cpu.weight"
				}
				return "cpu/kubepods/" + qos + "/cpu.shares"
			}
			value := func(shares int64) string {
				if v2 {
					return strconv.FormatUint(sharesToWeight(shares), 10)
				}
				return strconv.FormatInt(shares, 10)
			}
			make := func(qos, uid string, shares int64) string {
				p, err := podCgroupPath(qos, uid)
				if err != nil {
					t.Fatal(err)
				}
				spec := SandboxSpec{UID: uid, PodCgroup: &PodCgroup{QOSClass: qos, Resources: Resources{CPUShares: shares}}}
				if err := r.makePodCgroup(t.Context(), spec, p); err != nil {
					t.Fatal(err)
				}
				return p
			}
			a := make("Burstable", "a", 204)
			wantFiles(t, r.cgroups.root, map[string]string{file("burstable"): value(204)})
			make("Burstable", "b", 1024)
			make("BestEffort", "c", 2)
			make("Guaranteed", "d", 4096)
			wantFiles(t, r.cgroups.root, map[string]string{file("burstable"): value(1228), file("besteffort"): value(2)})
			for _, f := range []string{"cpu/kubepods/burstable/poda/cpu.shares", "kubepods/burstable/poda/cpu.weight"} {
				_ = os.Remove(filepath.Join(r.cgroups.root, f)) // a plain directory is no cgroup
			}
			r.dropPodCgroup(t.Context(), a, 0)
			wantFiles(t, r.cgroups.root, map[string]string{file("burstable"): value(1024)})
		})
	}
	for _, s := range []int64{2, 3, 204, 1024, 1228, 262144} {
		w := sharesToWeight(s)
		if got := weightToShares(int64(w)); sharesToWeight(got) != w {
			t.Errorf("weightToShares(%d) = %d, of weight %d; want shares of that weight", w, got, sharesToWeight(got))
		}
	}
}
