package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestVolumeUsageCheck(t *testing.T) {
	fs := VolumeUsage{CapacityBytes: 100, AvailableBytes: 60, UsedBytes: 30, Inodes: 10, InodesFree: 7, InodesUsed: 3}
	with := func(f func(*VolumeUsage)) VolumeUsage { u := fs; f(&u); return u }
	tests := []struct {
		name string
		u    VolumeUsage
		want string // empty: sane
	}{
		{"filesystem", fs, ""},
		{"full", with(func(u *VolumeUsage) { u.UsedBytes, u.AvailableBytes = 100, 0 }), ""},
		{"block: capacity only", VolumeUsage{CapacityBytes: 64 << 20}, ""},
		{"no inode counting", with(func(u *VolumeUsage) { u.Inodes, u.InodesFree, u.InodesUsed = 0, 0, 0 }), ""},
		{"no capacity", VolumeUsage{}, "capacity_bytes is 0"},
		{"negative used", with(func(u *VolumeUsage) { u.UsedBytes = -1 }), "used_bytes is negative (-1)"},
		{"negative capacity", with(func(u *VolumeUsage) { u.CapacityBytes = -100 }), "capacity_bytes is negative"},
		{"negative inodes free", with(func(u *VolumeUsage) { u.InodesFree = -5 }), "inodes_free is negative"},
		{"used over capacity", with(func(u *VolumeUsage) { u.UsedBytes, u.AvailableBytes = 101, 0 }), "used_bytes 101 exceeds capacity_bytes 100"},
		{"used plus available over capacity", with(func(u *VolumeUsage) { u.AvailableBytes = 71 }), "plus available_bytes 71 exceed"},
		{"huge available does not overflow", with(func(u *VolumeUsage) { u.AvailableBytes = 1<<63 - 1 }), "exceed capacity_bytes"},
		{"inodes used over total", with(func(u *VolumeUsage) { u.InodesUsed, u.InodesFree = 11, 0 }), "inodes_used 11 exceeds inodes 10"},
		{"inodes without a total", with(func(u *VolumeUsage) { u.Inodes = 0 }), "exceeds inodes 0"},
		{"inodes free over total", with(func(u *VolumeUsage) { u.InodesFree = 8 }), "inodes_free 8 exceed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.u.Check()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check() = %v, want nil", err)
			case tt.want != "" && (!errors.Is(err, ErrBadUsage) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Check() = %v, want ErrBadUsage with %q", err, tt.want)
			}
		})
	}
}

// fakeMetrics is a volume plugin's metrics side: whether it declares
// metrics, its answer per claim, and every call made to it.
type fakeMetrics struct {
	mu       sync.Mutex
	declares bool
	capErr   error
	answers  map[string]VolumeUsage // claim → usage
	errs     map[string]error       // claim → error
	calls    []string
	// block, when set, makes GetMetrics wait until its context ends.
	block bool
}

func (f *fakeMetrics) SupportsMetrics(_ context.Context, v Volume) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "supports "+string(v.ID))
	return f.declares, f.capErr
}

func (f *fakeMetrics) GetMetrics(ctx context.Context, pv PodVolume) (VolumeUsage, error) {
	f.mu.Lock()
	f.calls = append(f.calls, "metrics "+pv.Claim.String()+" "+string(pv.Pod))
	u, err, block := f.answers[pv.Claim.Name], f.errs[pv.Claim.Name], f.block
	f.mu.Unlock()
	if block {
		<-ctx.Done()
		return VolumeUsage{}, ctx.Err()
	}
	return u, err
}

func (f *fakeMetrics) metricsCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, "metrics ") {
			out = append(out, c)
		}
	}
	return out
}

func claimsString(cs []ClaimStats) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%d", c.Claim, c.Usage.CapacityBytes))
	}
	return strings.Join(out, ",")
}

// mountedManager is a running Manager with the pods mounted (every
// plugin call succeeds).
func mountedManager(t *testing.T, pods ...string) *Manager {
	t.Helper()
	store := &MemoryStore{}
	m, _ := startManager(t, store, newFakePlugins(store), nil)
	m.MarkDesiredPopulated()
	for _, p := range pods {
		uid, vols, _ := strings.Cut(p, "=")
		if err := m.WaitForAttachAndMount(testCtx(t), testPod(uid, vols)); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

type failure struct{ who, reason string }

// TestStatsAskOnlyPluginsThatDeclareMetrics judges the SupportsMetrics
// rule from the calls made to the plugin: only claims (filesystem and
// block) are asked about, only when their plugin declares metrics, and a
// plugin that errors or answers nonsense loses that volume's stats (the
// failure counted) while the others are reported.
func TestStatsAskOnlyPluginsThatDeclareMetrics(t *testing.T) {
	good := VolumeUsage{CapacityBytes: 64 << 20, AvailableBytes: 50 << 20, UsedBytes: 1 << 20, Inodes: 100, InodesFree: 90, InodesUsed: 10}
	tests := []struct {
		name      string
		declares  bool
		capErr    error
		answers   map[string]VolumeUsage
		errs      map[string]error
		wantCalls string
		wantStats string
		wantFails []failure
	}{
		{
			name: "declares metrics", declares: true,
			answers:   map[string]VolumeUsage{"c1": good, "blk1": {CapacityBytes: 32 << 20}},
			wantCalls: "metrics ns/blk1 p1,metrics ns/c1 p1",
			wantStats: "ns/blk1=33554432,ns/c1=67108864",
		},
		{name: "does not declare metrics", declares: false, answers: map[string]VolumeUsage{"c1": good}},
		{
			name: "cannot tell", capErr: errors.New("plugin not running"),
			wantFails: []failure{{"p1/blk1", StatsFailedCapabilities}, {"p1/c1", StatsFailedCapabilities}},
		},
		{
			name: "a failing and a nonsensical answer", declares: true,
			answers:   map[string]VolumeUsage{"c1": {CapacityBytes: 10, UsedBytes: 11}, "blk1": {CapacityBytes: -1}},
			wantCalls: "metrics ns/blk1 p1,metrics ns/c1 p1",
			wantFails: []failure{{"p1/blk1", StatsFailedAnswer}, {"p1/c1", StatsFailedAnswer}},
		},
		{
			name: "an error and a good answer", declares: true,
			answers:   map[string]VolumeUsage{"c1": good},
			errs:      map[string]error{"blk1": codeErr("Internal")},
			wantCalls: "metrics ns/blk1 p1,metrics ns/c1 p1",
			wantStats: "ns/c1=67108864",
			wantFails: []failure{{"p1/blk1", StatsFailedCall}},
		},
		{
			name: "not supported for one volume", declares: true,
			answers:   map[string]VolumeUsage{"c1": good},
			errs:      map[string]error{"blk1": fmt.Errorf("plugin csi: %w", ErrMetricsNotSupported)},
			wantCalls: "metrics ns/blk1 p1,metrics ns/c1 p1",
			wantStats: "ns/c1=67108864",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mountedManager(t, "p1=pvc:c1,empty:scratch,host:logs,csi:inline,pvc:blk1")
			plugins := &fakeMetrics{declares: tt.declares, capErr: tt.capErr, answers: tt.answers, errs: tt.errs}
			var fails []failure
			g := NewStatsGatherer(StatsConfig{Source: m, Plugins: plugins, Clock: systemClock{}, Failed: func(pv PodVolume, reason string, err error) {
				fails = append(fails, failure{string(pv.Pod) + "/" + pv.Name, reason})
			}})
			g.Gather(testCtx(t))
			if got := strings.Join(plugins.metricsCalls(), ","); got != tt.wantCalls {
				t.Errorf("metrics calls %q, want %q", got, tt.wantCalls)
			}
			plugins.mu.Lock()
			for _, c := range plugins.calls {
				if strings.Contains(c, "empty-dir") || strings.Contains(c, "host-path") || strings.Contains(c, "inline") {
					t.Errorf("call %q about a volume that is not a claim", c)
				}
			}
			plugins.mu.Unlock()
			if got := claimsString(g.Claims()); got != tt.wantStats {
				t.Errorf("stats %q, want %q", got, tt.wantStats)
			}
			if fmt.Sprint(fails) != fmt.Sprint(tt.wantFails) {
				t.Errorf("failures %v, want %v", fails, tt.wantFails)
			}
		})
	}
}

type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// TestStatsPeriod asks a target once when it appears and again only when
// the period has passed; a pod that is no longer desired loses its stats
// at once and is not asked again.
func TestStatsPeriod(t *testing.T) {
	m := mountedManager(t, "p1=pvc:c1", "p2=pvc:c1")
	plugins := &fakeMetrics{declares: true, answers: map[string]VolumeUsage{"c1": {CapacityBytes: 5}}}
	clock := &stepClock{now: time.Unix(100, 0)}
	g := NewStatsGatherer(StatsConfig{Source: m, Plugins: plugins, Clock: clock, Period: time.Minute})
	ctx := testCtx(t)
	steps := []struct {
		advance   time.Duration
		remove    string
		wantCalls int
		wantNext  time.Duration // after the start
		wantStats string
	}{
		{0, "", 2, time.Minute, "ns/c1=5"},
		{30 * time.Second, "", 2, time.Minute, "ns/c1=5"},
		{30 * time.Second, "", 4, 2 * time.Minute, "ns/c1=5"},
		{0, "p1", 4, 2 * time.Minute, "ns/c1=5"}, // p2 still reports the claim
		{0, "p2", 4, 0, ""},
	}
	start := clock.now
	for i, s := range steps {
		clock.now = clock.now.Add(s.advance)
		if s.remove != "" {
			if err := m.UnmountVolumes(ctx, testPod(s.remove, "pvc:c1")); err != nil {
				t.Fatal(err)
			}
		}
		next := g.Gather(ctx)
		if got := len(plugins.metricsCalls()); got != s.wantCalls {
			t.Errorf("step %d: %d metrics calls, want %d", i, got, s.wantCalls)
		}
		if s.wantNext == 0 && !next.IsZero() || s.wantNext != 0 && !next.Equal(start.Add(s.wantNext)) {
			t.Errorf("step %d: next %v, want start+%v", i, next.Sub(start), s.wantNext)
		}
		if got := claimsString(g.Claims()); got != s.wantStats {
			t.Errorf("step %d: stats %q, want %q", i, got, s.wantStats)
		}
	}
}

type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time                       { return c.now }
func (c *stepClock) After(time.Duration) <-chan time.Time { return nil }

// TestStatsNeverDuringTeardown: a volume with an operation in flight, or
// of a pod no longer desired, is not a target and cannot be leased; a
// lease holds back the unpublish (never a mount) and says so, and the
// unpublish starts once the lease is given back.
func TestStatsNeverDuringTeardown(t *testing.T) {
	r := NewReconciler(testClassifier)
	r.MarkDesiredPopulated()
	pod := testPod("p1", "pvc:c1")
	vols, err := DesiredVolumes(context.Background(), pod, testResolver{})
	if err != nil {
		t.Fatal(err)
	}
	r.SetPod("p1", vols)
	now := time.Unix(0, 0)
	step := func() []string {
		var out []string
		for _, op := range r.Step(now) {
			out = append(out, op.String())
			if op.Kind == OpStage || op.Kind == OpPublish {
				r.Complete(now, op, nil)
			}
		}
		return out
	}
	pv := vols[0]
	if r.HoldStats(pv) || len(r.StatsTargets()) != 0 {
		t.Fatal("a volume not yet mounted is a stats target")
	}
	stage := r.Step(now) // stage in flight
	if r.HoldStats(pv) {
		t.Error("leased while its stage is in flight")
	}
	r.Complete(now, stage[0], nil)
	step() // publish
	if got := r.StatsTargets(); len(got) != 1 || got[0].Claim != (types.NamespacedName{Namespace: "ns", Name: "c1"}) {
		t.Fatalf("targets %v, want the claim ns/c1", got)
	}
	if !r.HoldStats(pv) {
		t.Fatal("HoldStats false for a mounted claim")
	}
	// A second pod of the same claim still mounts while the lease is held.
	p2, _ := DesiredVolumes(context.Background(), testPod("p2", "pvc:c1"), testResolver{})
	r.SetPod("p2", p2)
	if got := step(); len(got) != 1 || !strings.HasPrefix(got[0], "publish") {
		t.Errorf("ops with a lease held %v, want the publish of p2", got)
	}
	r.RemovePod("p1")
	if r.HoldStats(pv) {
		t.Error("leased for a pod no longer desired")
	}
	if got := step(); len(got) != 0 || !r.StatsWaiting(pv.Volume.ID) {
		t.Errorf("ops with a lease held %v (waiting %v), want none, waiting", got, r.StatsWaiting(pv.Volume.ID))
	}
	r.ReleaseStats(pv.Volume.ID)
	if got := step(); len(got) != 1 || !strings.HasPrefix(got[0], "unpublish") || r.StatsWaiting(pv.Volume.ID) {
		t.Errorf("ops after the lease %v, want the unpublish of p1", got)
	}
}

// TestStatsCallCutByTeardown: a stats call in flight when its pod is
// removed is cancelled, and the unpublish follows once it returns.
func TestStatsCallCutByTeardown(t *testing.T) {
	store := &MemoryStore{}
	fp := newFakePlugins(store)
	m, _ := startManager(t, store, fp, nil)
	m.MarkDesiredPopulated()
	pod := testPod("p1", "pvc:c1")
	ctx := testCtx(t)
	if err := m.WaitForAttachAndMount(ctx, pod); err != nil {
		t.Fatal(err)
	}
	fp.expectCalls(t, "stage kubernetes.io/csi/drv^c1", "publish kubernetes.io/csi/drv^c1 p1")
	plugins := &fakeMetrics{declares: true, block: true}
	g := NewStatsGatherer(StatsConfig{Source: m, Plugins: plugins, Clock: systemClock{}, CallTimeout: time.Hour})
	gathered := make(chan struct{})
	go func() { g.Gather(ctx); close(gathered) }()
	for len(plugins.metricsCalls()) == 0 { // the call is in flight
		select {
		case <-ctx.Done():
			t.Fatal("no metrics call")
		case <-time.After(time.Millisecond):
		}
	}
	if err := m.UnmountVolumes(ctx, pod); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		t.Fatal("the stats call was not cut short")
	}
	fp.expectCalls(t, "unpublish kubernetes.io/csi/drv^c1 p1", "unstage kubernetes.io/csi/drv^c1")
}
