package lifecycle

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
)

// ProbeMetrics are the kubelet's prober metrics, with its names and
// labels. A nil *ProbeMetrics records nothing.
type ProbeMetrics struct {
	// Total counts probes by probe_type, result (successful, failed,
	// unknown), container, pod, namespace and pod_uid.
	Total *prometheus.CounterVec
	// Duration observes the seconds a probe took, by probe_type,
	// container, pod and namespace.
	Duration *prometheus.HistogramVec
}

// NewProbeMetrics creates the prober metrics and registers them on reg
// (which may be nil).
func NewProbeMetrics(reg prometheus.Registerer) *ProbeMetrics {
	m := &ProbeMetrics{
		Total: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "prober", Name: "probe_total",
			Help: "Cumulative number of liveness, readiness or startup probes of a container by result."},
			[]string{"probe_type", "result", "container", "pod", "namespace", "pod_uid"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "prober", Name: "probe_duration_seconds",
			Help: "Duration in seconds of a liveness, readiness or startup probe of a container.", Buckets: prometheus.DefBuckets},
			[]string{"probe_type", "container", "pod", "namespace"}),
	}
	if reg != nil {
		reg.MustRegister(m.Total, m.Duration)
	}
	return m
}

// observe records one probe.
func (m *ProbeMetrics) observe(pod *v1.Pod, container string, k ProbeKind, r ProbeResult, took time.Duration) {
	if m == nil {
		return
	}
	m.Total.WithLabelValues(k.String(), r.String(), container, pod.Name, pod.Namespace, string(pod.UID)).Inc()
	m.Duration.WithLabelValues(k.String(), container, pod.Name, pod.Namespace).Observe(took.Seconds())
}

// forget deletes the series of a container's probes.
func (m *ProbeMetrics) forget(pod *v1.Pod, container string, k ProbeKind) {
	if m == nil {
		return
	}
	for _, r := range []ProbeResult{ProbeSuccess, ProbeFailure, ProbeUnknown} {
		m.Total.DeleteLabelValues(k.String(), r.String(), container, pod.Name, pod.Namespace, string(pod.UID))
	}
	m.Duration.DeleteLabelValues(k.String(), container, pod.Name, pod.Namespace)
}
