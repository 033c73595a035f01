package nodestats

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The series of the kubelet's /metrics/resource that metrics-server reads,
// with the kubelet's names and labels.
var (
	nodeCPUDesc      = prometheus.NewDesc("node_cpu_usage_seconds_total", "Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	nodeMemoryDesc   = prometheus.NewDesc("node_memory_working_set_bytes", "Current working set of the node in bytes", nil, nil)
	containerCPUDesc = prometheus.NewDesc("container_cpu_usage_seconds_total", "Cumulative cpu time consumed by the container in core-seconds",
		[]string{"container", "pod", "namespace"}, nil)
	containerMemoryDesc = prometheus.NewDesc("container_memory_working_set_bytes", "Current working set of the container in bytes",
		[]string{"container", "pod", "namespace"}, nil)
	containerStartDesc = prometheus.NewDesc("container_start_time_seconds", "Start time of the container since unix epoch in seconds",
		[]string{"container", "pod", "namespace"}, nil)
	podCPUDesc    = prometheus.NewDesc("pod_cpu_usage_seconds_total", "Cumulative cpu time consumed by the pod in core-seconds", []string{"pod", "namespace"}, nil)
	podMemoryDesc = prometheus.NewDesc("pod_memory_working_set_bytes", "Current working set of the pod in bytes", []string{"pod", "namespace"}, nil)
	scrapeDesc    = prometheus.NewDesc("scrape_error", "1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// ResourceMetrics serves the kubelet's /metrics/resource from the last
// reading.
func (p *Provider) ResourceMetrics() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(resourceCollector{p})
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

type resourceCollector struct{ p *Provider }

func (c resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nodeCPUDesc, nodeMemoryDesc, containerCPUDesc, containerMemoryDesc, containerStartDesc, podCPUDesc, podMemoryDesc, scrapeDesc} {
		ch <- d
	}
}

func (c resourceCollector) Collect(ch chan<- prometheus.Metric) {
	s, err := c.p.Summary()
	scrapeErr := 0.0
	if err != nil {
		scrapeErr = 1
	}
	ch <- prometheus.MustNewConstMetric(scrapeDesc, prometheus.GaugeValue, scrapeErr)
	collectSummary(ch, s)
}

// collectSummary sends the series of s, each with the time it was read.
func collectSummary(ch chan<- prometheus.Metric, s statsapi.Summary) {
	send := func(d *prometheus.Desc, t prometheus.ValueType, at time.Time, v float64, labels ...string) {
		ch <- prometheus.NewMetricWithTimestamp(at, prometheus.MustNewConstMetric(d, t, v, labels...))
	}
	cpu := func(d *prometheus.Desc, c *statsapi.CPUStats, labels ...string) {
		if c != nil && c.UsageCoreNanoSeconds != nil {
			send(d, prometheus.CounterValue, c.Time.Time, float64(*c.UsageCoreNanoSeconds)/1e9, labels...)
		}
	}
	mem := func(d *prometheus.Desc, m *statsapi.MemoryStats, labels ...string) {
		if m != nil && m.WorkingSetBytes != nil {
			send(d, prometheus.GaugeValue, m.Time.Time, float64(*m.WorkingSetBytes), labels...)
		}
	}
	cpu(nodeCPUDesc, s.Node.CPU)
	mem(nodeMemoryDesc, s.Node.Memory)
	for _, p := range s.Pods {
		cpu(podCPUDesc, p.CPU, p.PodRef.Name, p.PodRef.Namespace)
		mem(podMemoryDesc, p.Memory, p.PodRef.Name, p.PodRef.Namespace)
		for _, c := range p.Containers {
			cpu(containerCPUDesc, c.CPU, c.Name, p.PodRef.Name, p.PodRef.Namespace)
			mem(containerMemoryDesc, c.Memory, c.Name, p.PodRef.Name, p.PodRef.Namespace)
			if !c.StartTime.IsZero() && c.CPU != nil {
				send(containerStartDesc, prometheus.GaugeValue, c.CPU.Time.Time, float64(c.StartTime.UnixNano())/1e9, c.Name, p.PodRef.Name, p.PodRef.Namespace)
			}
		}
	}
}
