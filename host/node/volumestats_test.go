package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
)

// staticStats is a StatsSource with fixed targets that are always leased.
type staticStats []volumemanager.PodVolume

func (s staticStats) StatsTargets() []volumemanager.PodVolume { return s }
func (s staticStats) BeginStats(ctx context.Context, _ volumemanager.PodVolume) (context.Context, func(), bool) {
	return ctx, func() {}, true
}
func (s staticStats) Changes() <-chan struct{} { return nil }

type usageAnswers map[string]volumemanager.VolumeUsage

func (a usageAnswers) SupportsMetrics(context.Context, volumemanager.Volume) (bool, error) {
	return true, nil
}

func (a usageAnswers) GetMetrics(_ context.Context, pv volumemanager.PodVolume) (volumemanager.VolumeUsage, error) {
	return a[pv.Claim.Name], nil
}

// TestVolumeStatsMetrics: the gauges carry the kubelet's names and
// labels, one series per claim; a nonsensical answer leaves its claim
// out and counts the failure.
func TestVolumeStatsMetrics(t *testing.T) {
	claim := func(uid, name string) volumemanager.PodVolume {
		return volumemanager.PodVolume{Pod: types.UID(uid), Name: name, Claim: types.NamespacedName{Namespace: "default", Name: name},
			Volume: volumemanager.Volume{ID: volumemanager.VolumeID("kubernetes.io/csi/loop^" + name), Plugin: volumemanager.PluginCSI, Shared: true}}
	}
	src := staticStats{claim("u1", "data"), claim("u2", "data"), claim("u1", "broken")}
	answers := usageAnswers{
		"data":   {CapacityBytes: 67108864, AvailableBytes: 60000000, UsedBytes: 1000000, Inodes: 16384, InodesFree: 16373, InodesUsed: 11},
		"broken": {CapacityBytes: 10, UsedBytes: 20},
	}
	reg := prometheus.NewRegistry()
	g, err := newVolumeStats(reg, src, answers, fakeStatsClock{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	g.Gather(context.Background())
	want := `
# HELP kubelet_volume_stats_capacity_bytes Capacity in bytes of the volume
# TYPE kubelet_volume_stats_capacity_bytes gauge
kubelet_volume_stats_capacity_bytes{namespace="default",persistentvolumeclaim="data"} 6.7108864e+07
# HELP kubelet_volume_stats_inodes_used Number of used inodes in the volume
# TYPE kubelet_volume_stats_inodes_used gauge
kubelet_volume_stats_inodes_used{namespace="default",persistentvolumeclaim="data"} 11
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kubelet_volume_stats_capacity_bytes", "kubelet_volume_stats_inodes_used"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(newVolumeStatsCollector(g)); n != 6 {
		t.Errorf("%d series, want 6 (one claim, six gauges)", n)
	}
	// The broken claim's answer is counted; every reason is exported.
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP podhost_volume_stats_failures_total Volumes left out of kubelet_volume_stats_* for a failure: reason is capabilities, call or answer.
# TYPE podhost_volume_stats_failures_total counter
podhost_volume_stats_failures_total{reason="answer"} 1
podhost_volume_stats_failures_total{reason="call"} 0
podhost_volume_stats_failures_total{reason="capabilities"} 0
`), "podhost_volume_stats_failures_total"); err != nil {
		t.Error(err)
	}
}

type fakeStatsClock struct{}

func (fakeStatsClock) Now() time.Time                       { return time.Unix(0, 0) }
func (fakeStatsClock) After(time.Duration) <-chan time.Time { return nil }
