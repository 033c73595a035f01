package nodestats

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

var t0 = time.Unix(1_700_000_000, 0)

func at(d time.Duration) int64 { return t0.Add(d).UnixNano() }

// reading is a runtime answer: pod web (uid u1) with container app, whose
// first attempt exited, and pod db with no numbers yet.
func reading(d time.Duration, appCPU uint64) *runtimev1.ListStatsResponse {
	return &runtimev1.ListStatsResponse{
		Sandboxes: []*runtimev1.SandboxStats{
			{SandboxId: "sb1", Metadata: &runtimev1.SandboxMetadata{Name: "web", Namespace: "ns", Uid: "u1"}, CreatedAt: at(-time.Hour),
				Cpu:    &runtimev1.CpuUsage{Timestamp: at(d), UsageCoreNanoSeconds: appCPU},
				Memory: &runtimev1.MemoryUsage{Timestamp: at(d), WorkingSetBytes: 40 << 20, UsageBytes: 50 << 20}},
			{SandboxId: "sb2", Metadata: &runtimev1.SandboxMetadata{Name: "db", Namespace: "ns", Uid: "u2"}, CreatedAt: at(-time.Minute)},
		},
		Containers: []*runtimev1.ContainerStats{
			{ContainerId: "c0", SandboxId: "sb1", Metadata: &runtimev1.ContainerMetadata{Name: "app"}, CreatedAt: at(-50 * time.Minute),
				Cpu: &runtimev1.CpuUsage{Timestamp: at(d), UsageCoreNanoSeconds: 7}},
			{ContainerId: "c1", SandboxId: "sb1", Metadata: &runtimev1.ContainerMetadata{Name: "app", Attempt: 1}, CreatedAt: at(-10 * time.Minute),
				Cpu:           &runtimev1.CpuUsage{Timestamp: at(d), UsageCoreNanoSeconds: appCPU},
				Memory:        &runtimev1.MemoryUsage{Timestamp: at(d), WorkingSetBytes: 40 << 20, UsageBytes: 50 << 20, RssBytes: 30 << 20},
				WritableLayer: &runtimev1.FilesystemUsage{Timestamp: at(d), UsedBytes: 4096, InodesUsed: 3}},
		},
		ImageFilesystems: []*runtimev1.FilesystemUsage{{Timestamp: at(d), Mountpoint: "/images", UsedBytes: 1 << 30, InodesUsed: 100}},
	}
}

func TestBuildSummary(t *testing.T) {
	prev := Sample{Time: t0, Runtime: reading(0, 2e9), Node: NodeNumbers{CPUNanos: 100e9}}
	cur := Sample{Time: t0.Add(10 * time.Second), Runtime: reading(10*time.Second, 7e9),
		Node: NodeNumbers{BootTime: t0.Add(-24 * time.Hour), CPUNanos: 110e9, MemTotal: 8 << 30, MemFree: 2 << 30, MemAvailable: 5 << 30, InactiveFile: 1 << 30,
			RootFs: FsNumbers{Capacity: 100 << 30, Available: 60 << 30, Used: 40 << 30, Inodes: 1000, InodesFree: 900}},
		ImageFs: FsNumbers{Capacity: 50 << 30, Available: 20 << 30},
		Volumes: map[string][]Volume{"u1": {{Name: "data", ClaimNamespace: "ns", ClaimName: "pvc", Usage: FsNumbers{Capacity: 1 << 30, Used: 1 << 20}}}},
	}
	s := Build("n1", cur, &prev)

	n := s.Node
	if n.NodeName != "n1" || !n.StartTime.Time.Equal(t0.Add(-24*time.Hour)) {
		t.Errorf("node %s started %v", n.NodeName, n.StartTime)
	}
	if got := *n.CPU.UsageCoreNanoSeconds; got != 110e9 {
		t.Errorf("node cpu %d; want 110e9", got)
	}
	if got := *n.CPU.UsageNanoCores; got != 1e9 { // 10 s of CPU in 10 s
		t.Errorf("node nano cores %d; want 1e9", got)
	}
	if ws, usage := *n.Memory.WorkingSetBytes, *n.Memory.UsageBytes; usage != 6<<30 || ws != 5<<30 || *n.Memory.AvailableBytes != 5<<30 {
		t.Errorf("node memory usage %d working set %d; want 6 GiB and 5 GiB", usage, ws)
	}
	if *n.Fs.CapacityBytes != 100<<30 || *n.Fs.InodesUsed != 100 {
		t.Errorf("node fs %+v", n.Fs)
	}
	if img := n.Runtime.ImageFs; *img.UsedBytes != 1<<30 || *img.CapacityBytes != 50<<30 || *img.InodesUsed != 100 {
		t.Errorf("image fs %+v", img)
	}

	if len(s.Pods) != 2 || s.Pods[0].PodRef.Name != "db" || s.Pods[1].PodRef.Name != "web" {
		t.Fatalf("pods %+v; want db, web", s.Pods)
	}
	if db := s.Pods[0]; db.CPU != nil || db.Memory != nil || len(db.Containers) != 0 {
		t.Errorf("db without numbers got %+v", db)
	}
	web := s.Pods[1]
	if web.PodRef.UID != "u1" || web.PodRef.Namespace != "ns" || !web.StartTime.Time.Equal(t0.Add(-time.Hour)) {
		t.Errorf("web ref %+v started %v", web.PodRef, web.StartTime)
	}
	if *web.CPU.UsageCoreNanoSeconds != 7e9 || *web.CPU.UsageNanoCores != 5e8 || *web.Memory.WorkingSetBytes != 40<<20 {
		t.Errorf("web cpu %+v memory %+v", web.CPU, web.Memory)
	}
	if len(web.Containers) != 1 {
		t.Fatalf("web containers %+v; want the newest app only", web.Containers)
	}
	app := web.Containers[0]
	if app.Name != "app" || !app.StartTime.Time.Equal(t0.Add(-10*time.Minute)) || *app.CPU.UsageCoreNanoSeconds != 7e9 || *app.CPU.UsageNanoCores != 5e8 ||
		*app.Memory.RSSBytes != 30<<20 || *app.Rootfs.UsedBytes != 4096 || *app.Rootfs.CapacityBytes != 50<<30 {
		t.Errorf("app %+v cpu %+v memory %+v rootfs %+v", app, app.CPU, app.Memory, app.Rootfs)
	}
	if len(web.VolumeStats) != 1 || web.VolumeStats[0].Name != "data" || web.VolumeStats[0].PVCRef.Name != "pvc" || *web.VolumeStats[0].UsedBytes != 1<<20 {
		t.Errorf("web volumes %+v", web.VolumeStats)
	}
}

// A counter that went back (a container restarted under the same ID is
// not possible, but a sandbox's sum drops when a container exits) gives
// no rate rather than a huge one.
func TestBuildNoRateWhenCounterDrops(t *testing.T) {
	prev := Sample{Time: t0, Runtime: reading(0, 9e9)}
	s := Build("n1", Sample{Time: t0.Add(10 * time.Second), Runtime: reading(10*time.Second, 7e9)}, &prev)
	if r := s.Pods[1].CPU.UsageNanoCores; r != nil {
		t.Errorf("rate %d after the counter dropped; want none", *r)
	}
}

type fakeSystem struct{}

func (fakeSystem) Node() (NodeNumbers, error) {
	return NodeNumbers{CPUNanos: 5e9, MemTotal: 1 << 30, MemFree: 1 << 29}, nil
}
func (fakeSystem) Statfs(string) (FsNumbers, error) { return FsNumbers{Capacity: 1 << 30}, nil }

func TestResourceMetrics(t *testing.T) {
	calls := 0
	p := New(Config{NodeName: "n1", System: fakeSystem{}, Runtime: func(context.Context) (*runtimev1.ListStatsResponse, error) {
		calls++
		return reading(0, 3e9), nil
	}})
	get := func() string {
		rec := httptest.NewRecorder()
		p.ResourceMetrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics/resource", nil))
		return rec.Body.String()
	}
	if body := get(); !strings.Contains(body, "scrape_error 1") {
		t.Errorf("before the first reading:\n%s\nwant scrape_error 1", body)
	}
	p.Gather(t.Context())
	body := get()
	body += get()
	if calls != 1 {
		t.Errorf("runtime asked %d times for one gathering and two scrapes; want 1", calls)
	}
	for _, want := range []string{
		"scrape_error 0",
		"node_cpu_usage_seconds_total 5 ",
		`container_cpu_usage_seconds_total{container="app",namespace="ns",pod="web"} 3 `,
		`container_memory_working_set_bytes{container="app",namespace="ns",pod="web"} 4.194304e+07 `,
		`container_start_time_seconds{container="app",namespace="ns",pod="web"} 1.6999994e+09 `,
		`pod_cpu_usage_seconds_total{namespace="ns",pod="web"} 3 `,
		`pod_memory_working_set_bytes{namespace="ns",pod="web"} 4.194304e+07 `,
		"node_memory_working_set_bytes 5.36870912e+08 ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
}

func TestParseProc(t *testing.T) {
	n, err := parseProcStat([]byte("cpu  100 20 30 1000 50 5 6 7 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nbtime 1700000000\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(100+20+30+5+6+7) * 1e7; n.CPUNanos != want || !n.BootTime.Equal(t0) {
		t.Errorf("cpu %d boot %v; want %d and %v", n.CPUNanos, n.BootTime, want, t0)
	}
	if err := parseMeminfo([]byte("MemTotal:  1000 kB\nMemFree: 200 kB\nMemAvailable: 500 kB\nInactive(file): 100 kB\n"), &n); err != nil {
		t.Fatal(err)
	}
	if n.MemTotal != 1000*1024 || n.MemFree != 200*1024 || n.MemAvailable != 500*1024 || n.InactiveFile != 100*1024 {
		t.Errorf("meminfo %+v", n)
	}
	if _, err := parseProcStat([]byte("intr 1\n")); err == nil {
		t.Error("a /proc/stat without a cpu line parsed")
	}
	if _, err := (procSystem{}).Node(); err != nil {
		t.Errorf("reading this machine: %v", err)
	}
}

// A runtime that does not answer within the period gives a reading
// without pods (and scrape_error 1), not a gatherer stuck on it.
func TestGatherBoundsTheRuntimeCall(t *testing.T) {
	p := New(Config{NodeName: "n1", System: fakeSystem{}, Period: time.Millisecond, Runtime: func(ctx context.Context) (*runtimev1.ListStatsResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	p.Gather(t.Context())
	s, err := p.Summary()
	if err == nil || len(s.Pods) != 0 || s.Node.CPU == nil {
		t.Errorf("summary %+v, %v; want the node's numbers, no pods and an error", s, err)
	}
}

// RuntimeStats hands out the last reading's runtime answer, without asking
// the runtime again; before a reading, or after a failed runtime call, it
// says so.
func TestRuntimeStatsIsTheLastReading(t *testing.T) {
	calls := 0
	answer := &runtimev1.ListStatsResponse{Containers: []*runtimev1.ContainerStats{{ContainerId: "c1"}}}
	var fail error
	p := New(Config{RootDir: t.TempDir(), System: fakeSystem{}, Runtime: func(context.Context) (*runtimev1.ListStatsResponse, error) {
		calls++
		return answer, fail
	}})
	if _, err := p.RuntimeStats(t.Context()); !errors.Is(err, ErrNotGathered) {
		t.Errorf("before a reading: %v; want ErrNotGathered", err)
	}
	p.Gather(t.Context())
	for range 3 {
		if got, err := p.RuntimeStats(t.Context()); err != nil || got != answer {
			t.Errorf("RuntimeStats: %v %v; want the reading's answer", got, err)
		}
	}
	if calls != 1 {
		t.Errorf("the runtime was asked %d times; want once, by Gather", calls)
	}
	fail = errors.New("plugin down")
	p.Gather(t.Context())
	if _, err := p.RuntimeStats(t.Context()); err == nil {
		t.Error("RuntimeStats after a failed runtime call: no error")
	}
}

// TestLastReading: the node's numbers of the last reading, as Gather read
// them, for host/eviction's signals.
func TestLastReading(t *testing.T) {
	p := New(Config{RootDir: t.TempDir(), System: fakeSystem{}, Runtime: func(context.Context) (*runtimev1.ListStatsResponse, error) {
		return &runtimev1.ListStatsResponse{}, nil
	}})
	if _, err := p.LastReading(); !errors.Is(err, ErrNotGathered) {
		t.Errorf("before a reading: %v; want ErrNotGathered", err)
	}
	p.Gather(t.Context())
	s, err := p.LastReading()
	want, _ := fakeSystem{}.Node()
	if err != nil || s.Node.MemTotal != want.MemTotal || s.Node.WorkingSet() != want.WorkingSet() || s.Node.RootFs.Capacity != 1<<30 {
		t.Errorf("LastReading: %+v %v; want the fake's numbers", s.Node, err)
	}
}
