package lifecycle_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// TestPodContainerStatusChurn is G70 ("Pods Extended / Pod Container
// Status") on the in-memory runtime: 3 workers × 15 pods whose container
// fails (exit 1) or whose init container fails in front of a "blocked"
// container, each deleted with grace 1 after a random 0–2 s, and every
// status written to the sink checked. The create → Deleted latency of every
// pod goes into a Summary with the e2e objectives, labelled node, printed
// as "Summary of latencies" and checked against bounds that follow from the
// fake clock: at least the random delete delay, at most that delay plus the
// grace period plus two simulated seconds of status batching.
func TestPodContainerStatusChurn(t *testing.T) {
	t.Run("G70 container status churn of deleted failing pods", func(t *testing.T) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(1, 70))
		clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
		rt := lifecycletest.NewFakeRuntime()
		sink := lifecycletest.NewRecordingSink()
		core := lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{Clock: clock, Cache: rt})
		status := lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: clock, Sink: sink, Pods: core})
		d := &inlineDriver{core: core, rt: rt, loops: map[types.UID]<-chan struct{}{},
			syncer: &lifecycle.Syncer{Runtime: rt, Status: status, Pods: core}}

		latencies := prometheus.NewSummaryVec(prometheus.SummaryOpts{
			Name:       "pod_container_status_churn_latency_seconds",
			Help:       "Create to Deleted latency of the churn pods.",
			Objectives: map[float64]float64{0.5: 0.05, 0.75: 0.025, 0.9: 0.01, 0.99: 0.001},
		}, []string{"node"})
		createdAt := clock.Now()
		watches := map[string]*churnWatch{}
		sink.OnDelete = func(_, name string) {
			w := watches[name]
			w.latency = clock.Now().Sub(createdAt)
			latencies.WithLabelValues("fake-node").Observe(w.latency.Seconds())
		}
		sink.OnPut = func(_, name string, s v1.PodStatus) {
			w := watches[name]
			if isTerminal(w.last.Phase) && s.Phase != w.last.Phase {
				t.Errorf("%s: terminal phase %s reverted to %s", name, w.last.Phase, s.Phase)
			}
			for _, c := range append(append([]v1.ContainerStatus(nil), s.InitContainerStatuses...), s.ContainerStatuses...) {
				if c.Name == "blocked" && (c.State.Running != nil || (c.State.Terminated != nil && c.State.Terminated.Reason != lifecycle.ReasonContainerStatusUnknown)) {
					t.Errorf("%s: the blocked container started: %+v", name, c.State)
				}
				if term := c.State.Terminated; term != nil {
					w.terminated[c.Name] = true
					switch {
					case term.ExitCode == 1:
					case term.ExitCode == 137 && (term.Reason == lifecycle.ReasonContainerStatusUnknown || term.Reason == "Error" || term.Reason == "Killed"):
					default:
						t.Errorf("%s: container %s exit %d reason %q", name, c.Name, term.ExitCode, term.Reason)
					}
					if !term.FinishedAt.IsZero() && term.StartedAt.IsZero() {
						t.Errorf("%s: finish time without start time", name)
					}
				} else if w.terminated[c.Name] {
					t.Errorf("%s: container %s was un-terminated", name, c.Name)
				}
			}
			w.last = s
		}

		for worker := range 3 {
			for i := range 15 {
				p := &v1.Pod{}
				p.Name, p.Namespace = fmt.Sprintf("churn-%d-%d", worker, i), "e2e"
				p.UID = types.UID(p.Name)
				one := int64(1)
				p.Spec.TerminationGracePeriodSeconds = &one
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				if i%2 == 0 {
					p.Spec.Containers = []v1.Container{{Name: "fail"}}
				} else {
					p.Spec.InitContainers = []v1.Container{{Name: "init-fail"}}
					p.Spec.Containers = []v1.Container{{Name: "blocked"}}
				}
				watches[p.Name] = &churnWatch{terminated: map[string]bool{}, pod: p,
					deletedAt: clock.Now().Add(time.Duration(rng.IntN(2001)) * time.Millisecond)}
				sink.Store(p)
				d.update(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateCreate, Pod: p})
			}
		}
		for step := 0; step < 100 && len(core.UIDs()) > 0; step++ {
			d.drain(ctx)
			status.SyncBatch(ctx, step%10 == 9) // a full batch every simulated second
			// The failing containers exit, as /bin/false does.
			for _, w := range watches {
				rt.ExitContainer(w.pod.UID, "fail", 1)
				rt.ExitContainer(w.pod.UID, "init-fail", 1)
			}
			clock.Step(100 * time.Millisecond)
			for _, w := range watches {
				if w.pod.DeletionTimestamp == nil && !clock.Now().Before(w.deletedAt) {
					del := w.pod.DeepCopy()
					ts := metav1.NewTime(clock.Now())
					one := int64(1)
					del.DeletionTimestamp, del.DeletionGracePeriodSeconds = &ts, &one
					w.pod = del
					if api, ok := sink.Pod(del.Namespace, del.Name); ok {
						api.DeletionTimestamp, api.DeletionGracePeriodSeconds = &ts, &one
						sink.Store(api)
					}
				}
				d.update(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateSync, Pod: w.pod})
			}
			core.SyncKnownPods(livePods(watches, sink))
		}
		for name, w := range watches {
			if _, ok := sink.Pod("e2e", name); ok {
				t.Errorf("%s was never deleted (phase %s)", name, w.last.Phase)
				continue
			}
			if !isTerminal(w.last.Phase) && !(w.last.Phase == v1.PodPending && !anyRunningStatus(w.last)) {
				t.Errorf("%s deleted in phase %s", name, w.last.Phase)
			}
			delay := w.deletedAt.Sub(createdAt)
			if w.latency < delay || w.latency > delay+3*time.Second || w.latency > time.Hour {
				t.Errorf("%s: create → Deleted took %s with the delete sent after %s", name, w.latency, delay)
			}
		}
		m := &dto.Metric{}
		if err := latencies.WithLabelValues("fake-node").(prometheus.Metric).Write(m); err != nil {
			t.Fatal(err)
		}
		if got := m.GetSummary().GetSampleCount(); got != 45 {
			t.Errorf("latency summary has %d samples; want 45", got)
		}
		var q []string
		for _, qt := range m.GetSummary().GetQuantile() {
			q = append(q, fmt.Sprintf("p%g=%.2fs", qt.GetQuantile()*100, qt.GetValue()))
			if v := qt.GetValue(); v <= 0 || v > 2+1+2 {
				t.Errorf("quantile %g = %gs; want in (0, 5]", qt.GetQuantile(), v)
			}
		}
		t.Logf("Summary of latencies (node=fake-node, n=%d): %s", m.GetSummary().GetSampleCount(), strings.Join(q, " "))
	})
}

type churnWatch struct {
	last       v1.PodStatus
	terminated map[string]bool
	deletedAt  time.Time
	latency    time.Duration
	pod        *v1.Pod
}

// livePods is the desired set: the pods still present in the sink.
func livePods(watches map[string]*churnWatch, sink *lifecycletest.RecordingSink) []*v1.Pod {
	var out []*v1.Pod
	for name, w := range watches {
		if _, ok := sink.Pod("e2e", name); ok {
			out = append(out, w.pod)
		}
	}
	return out
}

func anyRunningStatus(s v1.PodStatus) bool {
	for _, c := range s.ContainerStatuses {
		if c.State.Running != nil {
			return true
		}
	}
	return false
}
