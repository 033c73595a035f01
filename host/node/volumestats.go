package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/podhost/podhost/host/volumemanager"
)

// volumeStatsLabels are the kubelet's labels of its volume stats.
var volumeStatsLabels = []string{"namespace", "persistentvolumeclaim"}

// volumeStatsCollector serves the gatherer's cache as the kubelet's
// kubelet_volume_stats_* gauges, one series per claim. A scrape calls no
// plugin.
type volumeStatsCollector struct {
	g     *volumemanager.StatsGatherer
	descs []volumeStatDesc
}

type volumeStatDesc struct {
	desc  *prometheus.Desc
	value func(volumemanager.VolumeUsage) int64
}

func newVolumeStatsCollector(g *volumemanager.StatsGatherer) *volumeStatsCollector {
	d := func(name, help string, value func(volumemanager.VolumeUsage) int64) volumeStatDesc {
		return volumeStatDesc{prometheus.NewDesc("kubelet_volume_stats_"+name, help, volumeStatsLabels, nil), value}
	}
	return &volumeStatsCollector{g: g, descs: []volumeStatDesc{
		d("capacity_bytes", "Capacity in bytes of the volume", func(u volumemanager.VolumeUsage) int64 { return u.CapacityBytes }),
		d("available_bytes", "Number of available bytes in the volume", func(u volumemanager.VolumeUsage) int64 { return u.AvailableBytes }),
		d("used_bytes", "Number of used bytes in the volume", func(u volumemanager.VolumeUsage) int64 { return u.UsedBytes }),
		d("inodes", "Maximum number of inodes in the volume", func(u volumemanager.VolumeUsage) int64 { return u.Inodes }),
		d("inodes_free", "Number of free inodes in the volume", func(u volumemanager.VolumeUsage) int64 { return u.InodesFree }),
		d("inodes_used", "Number of used inodes in the volume", func(u volumemanager.VolumeUsage) int64 { return u.InodesUsed }),
	}}
}

func (c *volumeStatsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d.desc
	}
}

func (c *volumeStatsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.g.Claims() {
		for _, d := range c.descs {
			ch <- prometheus.MustNewConstMetric(d.desc, prometheus.GaugeValue, float64(d.value(s.Usage)), s.Claim.Namespace, s.Claim.Name)
		}
	}
}

// newVolumeStats builds the stats gatherer over the volume manager and
// the volume plugins, and registers its metrics: the kubelet's gauges and
// podhost_volume_stats_failures_total{reason}, the volumes skipped for a
// failure (capabilities: the plugin could not say whether it serves
// metrics; call: GetMetrics failed; answer: the usage cannot be true).
func newVolumeStats(reg prometheus.Registerer, m volumemanager.StatsSource, plugins volumemanager.MetricsPlugins, clock volumemanager.Clock, log hclog.Logger) (*volumemanager.StatsGatherer, error) {
	failures := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "podhost_volume_stats_failures_total",
		Help: "Volumes left out of kubelet_volume_stats_* for a failure: reason is capabilities, call or answer.",
	}, []string{"reason"})
	for _, r := range []string{volumemanager.StatsFailedCapabilities, volumemanager.StatsFailedCall, volumemanager.StatsFailedAnswer} {
		failures.WithLabelValues(r)
	}
	g := volumemanager.NewStatsGatherer(volumemanager.StatsConfig{
		Source: m, Plugins: plugins, Clock: clock,
		Failed: func(pv volumemanager.PodVolume, reason string, err error) {
			failures.WithLabelValues(reason).Inc()
			logf := log.Warn
			if reason == volumemanager.StatsFailedCapabilities {
				logf = log.Debug // a plugin restarting
			}
			logf("volume stats skipped", "uid", pv.Pod, "volume", pv.Name, "claim", pv.Claim.String(), "reason", reason, "err", err)
		},
	})
	if err := errors.Join(reg.Register(failures), reg.Register(newVolumeStatsCollector(g))); err != nil {
		return nil, fmt.Errorf("registering the volume stats: %w", err)
	}
	return g, nil
}

// runVolumeStats gathers volume stats once the volume state is rebuilt.
func (n *Node) runVolumeStats(ctx context.Context) {
	select {
	case <-n.volumesReady:
	case <-ctx.Done():
		return
	}
	n.volumeStats.Run(ctx)
}
