package lifecycle_test

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

var podStartupBuckets = []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}

// TestMetricSchema checks every kubelet metric that lifecycle defines:
// exact name, type, label names and buckets.
func TestMetricSchema(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := lifecycle.NewMetrics(reg, lifecycletest.NewFakeClock(time.Unix(1, 0)))
	// Vectors appear in a gather only once they have a child.
	m.DesiredPods.WithLabelValues("")
	m.ActivePods.WithLabelValues("")
	m.WorkingPods.WithLabelValues("sync", "desired", "")
	m.RestartedPods.WithLabelValues("")
	m.PodWorkerDuration.WithLabelValues("create")

	type want struct {
		typ     dto.MetricType
		labels  []string
		buckets []float64
	}
	wants := map[string]want{
		"kubelet_desired_pods":                      {dto.MetricType_GAUGE, []string{"static"}, nil},
		"kubelet_active_pods":                       {dto.MetricType_GAUGE, []string{"static"}, nil},
		"kubelet_mirror_pods":                       {dto.MetricType_GAUGE, nil, nil},
		"kubelet_working_pods":                      {dto.MetricType_GAUGE, []string{"config", "lifecycle", "static"}, nil},
		"kubelet_restarted_pods_total":              {dto.MetricType_COUNTER, []string{"static"}, nil},
		"kubelet_orphaned_runtime_pods_total":       {dto.MetricType_COUNTER, nil, nil},
		"kubelet_pod_worker_duration_seconds":       {dto.MetricType_HISTOGRAM, []string{"operation_type"}, prometheus.DefBuckets},
		"kubelet_pod_worker_start_duration_seconds": {dto.MetricType_HISTOGRAM, nil, prometheus.DefBuckets},
		"kubelet_pod_start_duration_seconds":        {dto.MetricType_HISTOGRAM, nil, podStartupBuckets},
		"kubelet_pod_status_sync_duration_seconds":  {dto.MetricType_HISTOGRAM, nil, []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 20, 30, 45, 60}},
		"kubelet_containers_per_pod_count":          {dto.MetricType_HISTOGRAM, nil, []float64{1, 2, 4, 8, 16}},
		"kubelet_pleg_relist_duration_seconds":      {dto.MetricType_HISTOGRAM, nil, prometheus.DefBuckets},
		"kubelet_pleg_relist_interval_seconds":      {dto.MetricType_HISTOGRAM, nil, prometheus.DefBuckets},
		"kubelet_pleg_discard_events":               {dto.MetricType_COUNTER, nil, nil},
		"kubelet_pleg_last_seen_seconds":            {dto.MetricType_GAUGE, nil, nil},
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range fams {
		w, ok := wants[f.GetName()]
		if !ok {
			continue
		}
		seen[f.GetName()] = true
		if f.GetType() != w.typ {
			t.Errorf("%s has type %s; want %s", f.GetName(), f.GetType(), w.typ)
		}
		m := f.GetMetric()[0]
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName())
		}
		sort.Strings(labels)
		if !slices.Equal(labels, w.labels) {
			t.Errorf("%s has labels %q; want %q", f.GetName(), labels, w.labels)
		}
		if w.buckets != nil {
			var got []float64
			for _, b := range m.GetHistogram().GetBucket() {
				got = append(got, b.GetUpperBound())
			}
			if !slices.Equal(got, w.buckets) {
				t.Errorf("%s has buckets %v; want %v", f.GetName(), got, w.buckets)
			}
		}
	}
	for name := range wants {
		if !seen[name] {
			t.Errorf("metric %s is not registered", name)
		}
	}
}

// histogram returns the sample count and sum of one histogram series.
func histogram(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) (uint64, float64) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue series
				}
			}
			return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
		}
	}
	return 0, 0
}

func TestPodWorkerDurationByOperation(t *testing.T) {
	// kubelet_pod_worker_duration_seconds{operation_type}: from the oldest
	// StartTime of the coalesced requests to the end of the work, with
	// "terminated" for the finish and for a never-started static pod.
	h := lifecycletest.NewHarness()
	run := func(lines ...string) {
		for _, l := range lines {
			h.Run(lifecycletest.ParseCmd(l))
		}
	}
	run("update create uid=1 start", "drain",
		"update update uid=1 start", "drain",
		"update sync uid=1 start", "drain",
		// A kill with a start time; a sync with a start time arrives
		// while the termination is in flight and is realised by the
		// terminated call.
		"update kill uid=1 start", "begin uid=1", "update sync uid=1 start", "finish uid=1", "drain",
		// A static pod waiting behind a holder is killed: it never starts.
		"update create uid=s1 name=web static", "drain",
		"update create uid=s2 name=web static", "drain",
		"update kill uid=s2 name=web static start", "drain")
	const name = "kubelet_pod_worker_duration_seconds"
	for _, tt := range []struct {
		op    string
		count uint64
		sum   float64
	}{
		// The harness clock moves 1 s after each UpdatePod and each wake.
		{"create", 1, 2}, {"update", 1, 2}, {"sync", 1, 2}, {"kill", 1, 3}, {"terminated", 2, 2 + 2},
	} {
		count, sum := histogram(t, h.Registry, name, map[string]string{"operation_type": tt.op})
		if count != tt.count || sum != tt.sum {
			t.Errorf("%s{operation_type=%q}: count %d sum %g; want count %d sum %g", name, tt.op, count, sum, tt.count, tt.sum)
		}
	}
	if n := testutil.CollectAndCount(h.Metrics.PodWorkerDuration); n != 5 {
		t.Errorf("%s has %d series; want 5", name, n)
	}
}

func TestPodStartDurations(t *testing.T) {
	// kubelet_pod_worker_start_duration_seconds: config.seen to the first
	// SyncPod with create. kubelet_pod_start_duration_seconds: config.seen
	// to the first status in which the pod runs; observed once.
	ctx := context.Background()
	clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
	reg := prometheus.NewRegistry()
	metrics := lifecycle.NewMetrics(reg, clock)
	rt := lifecycletest.NewFakeRuntime()
	sink := lifecycletest.NewRecordingSink()
	core := lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{Clock: clock, Cache: rt, Metrics: metrics})
	status := lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: clock, Sink: sink, Pods: core, Metrics: metrics})
	d := &inlineDriver{core: core, rt: rt, loops: map[types.UID]<-chan struct{}{},
		syncer: &lifecycle.Syncer{Runtime: rt, Status: status, Pods: core, Metrics: metrics, Clock: clock}}

	pod := podWithGrace("1", "p", 30)
	pod.Spec.Containers = []v1.Container{{Name: "c"}}
	pod.Annotations = map[string]string{lifecycle.ConfigFirstSeenAnnotation: clock.Now().Format(time.RFC3339Nano)}
	unseen := podWithGrace("2", "q", 30) // no config.seen: nothing observed
	unseen.Spec.Containers = []v1.Container{{Name: "c"}}
	clock.Step(3 * time.Second)
	d.update(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: pod})
	d.update(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: unseen})
	d.drain(ctx)
	if c, s := histogram(t, reg, "kubelet_pod_worker_start_duration_seconds", nil); c != 1 || s != 3 {
		t.Errorf("worker start: count %d sum %g; want 1 and 3", c, s)
	}
	// The first SyncPod saw the runtime before the start: Pending.
	if c, _ := histogram(t, reg, "kubelet_pod_start_duration_seconds", nil); c != 0 {
		t.Errorf("pod start observed %d times while Pending", c)
	}
	clock.Step(2 * time.Second)
	for range 3 {
		d.update(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateSync, Pod: pod})
		d.update(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateSync, Pod: unseen})
		d.drain(ctx)
		clock.Step(time.Second)
	}
	if st, _ := status.PodStatus("1"); st.Phase != v1.PodRunning {
		t.Fatalf("pod phase %s; want Running", st.Phase)
	}
	if c, s := histogram(t, reg, "kubelet_pod_start_duration_seconds", nil); c != 1 || s != 5 {
		t.Errorf("pod start: count %d sum %g; want 1 and 5", c, s)
	}
	if c, _ := histogram(t, reg, "kubelet_pod_worker_start_duration_seconds", nil); c != 1 {
		t.Errorf("worker start observed %d times; want only on create", c)
	}
}
