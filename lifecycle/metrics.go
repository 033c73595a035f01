package lifecycle

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/component-base/metrics/prometheusextension"
)

// Label values of the kubelet_working_pods series.
const (
	configDesired     = "desired"
	configOrphan      = "orphan"
	configRuntimeOnly = "runtime_only"
	staticUnknown     = "unknown"
)

// podStartupBuckets are the kubelet's pod start duration buckets.
var podStartupBuckets = []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}

// Metrics are the lifecycle metrics, with the kubelet's names, types and
// labels so that existing dashboards work. A nil *Metrics records nothing.
type Metrics struct {
	DesiredPods            *prometheus.GaugeVec
	ActivePods             *prometheus.GaugeVec
	MirrorPods             prometheus.Gauge
	WorkingPods            *prometheus.GaugeVec
	RestartedPods          *prometheus.CounterVec
	OrphanedRuntimePods    prometheus.Counter
	PodWorkerDuration      *prometheus.HistogramVec
	PodWorkerStartDuration prometheus.Histogram
	PodStartDuration       prometheus.Histogram
	ContainersPerPod       prometheus.Histogram
	PodStatusSyncDuration  prometheus.Histogram
	PLEGRelistDuration     prometheus.Histogram
	PLEGRelistInterval     prometheus.Histogram
	PLEGLastSeen           prometheus.Gauge
	// WorkingPodsTimeWeighted is a time-weighted histogram of the number of
	// pod workers: each value is weighted by how long it held.
	WorkingPodsTimeWeighted prometheusextension.TimingHistogram
}

// NewMetrics creates the metrics on the clock and registers them on reg
// (which may be nil).
func NewMetrics(reg prometheus.Registerer, clock Clock) *Metrics {
	const ns = "kubelet"
	m := &Metrics{
		DesiredPods: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "desired_pods",
			Help: "The number of pods the kubelet is being instructed to run. static is true if the pod is not from the apiserver."}, []string{"static"}),
		ActivePods: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "active_pods",
			Help: "The number of pods the kubelet considers active and which are being considered when admitting new pods. static is true if the pod is not from the apiserver."}, []string{"static"}),
		MirrorPods: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "mirror_pods",
			Help: "The number of mirror pods the kubelet will try to create (one per admitted static pod)"}),
		WorkingPods: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "working_pods",
			Help: "Number of pods the kubelet is actually running, broken down by lifecycle phase, whether the pod is desired, orphaned, or runtime only (also orphaned), and whether the pod is static."},
			[]string{"lifecycle", "config", "static"}),
		RestartedPods: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "restarted_pods_total",
			Help: "Number of pods that have been restarted because they were deleted and recreated with the same UID while the kubelet was watching them."}, []string{"static"}),
		OrphanedRuntimePods: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "orphaned_runtime_pods_total",
			Help: "Number of pods that have been detected in the container runtime without being already known to the pod worker."}),
		PodWorkerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "pod_worker_duration_seconds",
			Help: "Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync", Buckets: prometheus.DefBuckets}, []string{"operation_type"}),
		PodWorkerStartDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "pod_worker_start_duration_seconds",
			Help: "Duration in seconds from kubelet seeing a pod to starting a worker.", Buckets: prometheus.DefBuckets}),
		PodStartDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "pod_start_duration_seconds",
			Help: "Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run", Buckets: podStartupBuckets}),
		ContainersPerPod: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "containers_per_pod_count",
			Help: "The number of containers per pod.", Buckets: []float64{1, 2, 4, 8, 16}}),
		PodStatusSyncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "pod_status_sync_duration_seconds",
			Help:    "Duration in seconds to sync a pod status update. Measures time from detection of a change to pod status until the API is successfully updated for that pod, even if multiple intevening changes to pod status occur.",
			Buckets: []float64{0.010, 0.050, 0.100, 0.500, 1, 5, 10, 20, 30, 45, 60}}),
		PLEGRelistDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "pleg_relist_duration_seconds",
			Help: "Duration in seconds for relisting pods in PLEG.", Buckets: prometheus.DefBuckets}),
		PLEGRelistInterval: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "pleg_relist_interval_seconds",
			Help: "Interval in seconds between relisting in PLEG.", Buckets: prometheus.DefBuckets}),
		PLEGLastSeen: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "pleg_last_seen_seconds",
			Help: "Timestamp in seconds when PLEG was last seen active."}),
	}
	th, err := prometheusextension.NewTestableTimingHistogram(clock.Now, prometheusextension.TimingHistogramOpts{
		Namespace: ns, Name: "working_pods_time_weighted",
		Help:    "Number of pod workers, as a histogram weighted by how long each value held.",
		Buckets: []float64{0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000},
	})
	if err != nil {
		panic(err) // static options: a failure is a programming error
	}
	m.WorkingPodsTimeWeighted = th
	if reg != nil {
		reg.MustRegister(m.DesiredPods, m.ActivePods, m.MirrorPods, m.WorkingPods, m.RestartedPods,
			m.OrphanedRuntimePods, m.PodWorkerDuration, m.PodWorkerStartDuration, m.PodStartDuration,
			m.ContainersPerPod, m.PodStatusSyncDuration, m.PLEGRelistDuration, m.PLEGRelistInterval,
			m.PLEGLastSeen, m.WorkingPodsTimeWeighted)
	}
	return m
}

func (m *Metrics) observeWorkerDuration(op string, start, now time.Time) {
	if m == nil || start.IsZero() {
		return
	}
	m.PodWorkerDuration.WithLabelValues(op).Observe(now.Sub(start).Seconds())
}

func (m *Metrics) observeContainersPerPod(n int) {
	if m == nil {
		return
	}
	m.ContainersPerPod.Observe(float64(n))
}

func staticLabel(static bool) string {
	if static {
		return "true"
	}
	return ""
}

// workingPodsKey is one kubelet_working_pods series.
type workingPodsKey struct{ lifecycle, config, static string }

// recordWorkingPods sets all 15 kubelet_working_pods series from the
// workers known after housekeeping, zeros included.
func (m *Metrics) recordWorkingPods(counts map[workingPodsKey]int) {
	if m == nil {
		return
	}
	total := 0
	for _, lc := range []WorkType{WorkSync, WorkTerminating, WorkTerminated} {
		for _, cfg := range []string{configDesired, configOrphan} {
			for _, st := range []string{"", "true"} {
				k := workingPodsKey{lc.String(), cfg, st}
				m.WorkingPods.WithLabelValues(k.lifecycle, k.config, k.static).Set(float64(counts[k]))
				total += counts[k]
			}
		}
		k := workingPodsKey{lc.String(), configRuntimeOnly, staticUnknown}
		m.WorkingPods.WithLabelValues(k.lifecycle, k.config, k.static).Set(float64(counts[k]))
		total += counts[k]
	}
	m.WorkingPodsTimeWeighted.Set(float64(total))
}
