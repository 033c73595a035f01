package lifecycle

import (
	"maps"
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
//
// Of the kubelet's lifecycle metrics (docs/lifecycle.md, section 8), these
// are not defined here because their source is not in this package or does not
// exist in podhost yet: the pod start SLI family
// (kubelet_pod_start_sli_duration_seconds,
// kubelet_pod_start_total_duration_seconds,
// kubelet_first_network_pod_start_sli_duration_seconds: they need image
// pull and API watch timestamps), the runtime view
// (kubelet_running_pods, kubelet_running_containers,
// kubelet_started_pods_total, kubelet_started_pods_errors_total,
// kubelet_started_containers_total: owned by the runtime adapter in host/),
// kubelet_evictions and kubelet_preemptions (no eviction manager yet) and
// kubelet_admission_rejections_total (admission lives in host/).
// kubelet_working_pods_time_weighted is a podhost addition.
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
	PLEGDiscardEvents      prometheus.Counter
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
			Help: "Config pods (mirror pods excluded) the node agent was asked to run; static=\"true\" for pods from a non-API source."}, []string{"static"}),
		ActivePods: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "active_pods",
			Help: "Config pods that still hold node resources and count for admission; static=\"true\" for pods from a non-API source."}, []string{"static"}),
		MirrorPods: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "mirror_pods",
			Help: "Mirror pods in config: one per admitted static pod."}),
		WorkingPods: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "working_pods",
			Help: "Pod workers after housekeeping by lifecycle phase (sync, terminating, terminated), relation to config (desired, orphan, runtime_only) and static-ness."},
			[]string{"lifecycle", "config", "static"}),
		RestartedPods: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "restarted_pods_total",
			Help: "Desired pods unknown to the pod worker that housekeeping sent again as create, usually a UID reused after a delete."}, []string{"static"}),
		OrphanedRuntimePods: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "orphaned_runtime_pods_total",
			Help: "Runtime pods unknown to the pod worker that housekeeping killed with a grace period of one second."}),
		PodWorkerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "pod_worker_duration_seconds",
			Help: "Seconds from a pod worker request (the oldest of coalesced ones) until the worker realised it, by operation_type (create, update, sync, kill, terminated).", Buckets: prometheus.DefBuckets}, []string{"operation_type"}),
		PodWorkerStartDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "pod_worker_start_duration_seconds",
			Help: "Seconds from the config.seen time of a pod to its first SyncPod with update type create.", Buckets: prometheus.DefBuckets}),
		PodStartDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "pod_start_duration_seconds",
			Help: "Seconds from the config.seen time of a pod to the first status in which it is Running.", Buckets: podStartupBuckets}),
		ContainersPerPod: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "containers_per_pod_count",
			Help: "Containers of a pod, observed when its worker first starts it.", Buckets: []float64{1, 2, 4, 8, 16}}),
		PodStatusSyncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "pod_status_sync_duration_seconds",
			Help:    "Seconds from the first unwritten change of a pod status until a sink accepted it, across any later changes.",
			Buckets: []float64{0.010, 0.050, 0.100, 0.500, 1, 5, 10, 20, 30, 45, 60}}),
		PLEGRelistDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "pleg_relist_duration_seconds",
			Help: "Seconds one PLEG relist took.", Buckets: prometheus.DefBuckets}),
		PLEGRelistInterval: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "pleg_relist_interval_seconds",
			Help: "Seconds between the starts of two PLEG relists.", Buckets: prometheus.DefBuckets}),
		PLEGLastSeen: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "pleg_last_seen_seconds",
			Help: "Unix time in seconds of the last PLEG relist."}),
		PLEGDiscardEvents: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "pleg_discard_events",
			Help: "PLEG events dropped because the event channel was full."}),
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
			m.PLEGLastSeen, m.PLEGDiscardEvents, m.WorkingPodsTimeWeighted)
	}
	return m
}

func (m *Metrics) observeWorkerDuration(op string, start, now time.Time) {
	if m == nil || start.IsZero() {
		return
	}
	m.PodWorkerDuration.WithLabelValues(op).Observe(now.Sub(start).Seconds())
}

// observeWorkerStart records the time from a pod's first sighting to its
// first SyncPod with update type create.
func (m *Metrics) observeWorkerStart(firstSeen, now time.Time) {
	if m == nil || firstSeen.IsZero() {
		return
	}
	m.PodWorkerStartDuration.Observe(now.Sub(firstSeen).Seconds())
}

// observePodStart records the time from a pod's first sighting to the first
// status in which it runs.
func (m *Metrics) observePodStart(firstSeen, now time.Time) {
	if m == nil || firstSeen.IsZero() {
		return
	}
	m.PodStartDuration.Observe(now.Sub(firstSeen).Seconds())
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
// workers known after housekeeping, zeros included. It returns the counts
// that fit none of them, for the caller to log: they are not exported.
func (m *Metrics) recordWorkingPods(counts map[workingPodsKey]int) (unexpected map[workingPodsKey]int) {
	if m == nil {
		return nil
	}
	unexpected = maps.Clone(counts)
	total := 0
	for _, lc := range []WorkType{WorkSync, WorkTerminating, WorkTerminated} {
		for _, cfg := range []string{configDesired, configOrphan} {
			for _, st := range []string{"", "true"} {
				k := workingPodsKey{lc.String(), cfg, st}
				m.WorkingPods.WithLabelValues(k.lifecycle, k.config, k.static).Set(float64(counts[k]))
				total += counts[k]
				delete(unexpected, k)
			}
		}
		k := workingPodsKey{lc.String(), configRuntimeOnly, staticUnknown}
		m.WorkingPods.WithLabelValues(k.lifecycle, k.config, k.static).Set(float64(counts[k]))
		total += counts[k]
		delete(unexpected, k)
	}
	m.WorkingPodsTimeWeighted.Set(float64(total))
	return unexpected
}
