package node

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/events"
	"github.com/podhost/podhost/host/state"
	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
	"github.com/podhost/podhost/sources"
)

// admitNode is a node with what admission reads (the pod worker core, the
// status manager, the desired set) and no driver: the test hands each
// change to the core as the sync loop does and performs the work itself.
type admitNode struct {
	*Node
	t *testing.T
}

func newAdmitNode(t *testing.T) admitNode {
	t.Helper()
	store, err := state.Open(filepath.Join(t.TempDir(), state.FileName), hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
	core := lifecycle.NewPodWorkers(lifecycle.PodWorkersConfig{Clock: clock})
	n := &Node{
		log: hclog.NewNullLogger(), clock: clock, store: store, events: events.New(events.Options{}),
		desired: newDesiredSet(), updates: make(chan lifecycle.ConfigChange, 1),
		core: core, status: lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: clock, Pods: core}),
		admission: newAdmitter(prometheus.NewRegistry()),
	}
	return admitNode{Node: n, t: t}
}

// change makes pods the desired set and hands the resulting updates to the
// pod workers, as the sync loop does; it returns them as "create 1".
func (a admitNode) change(pods ...*v1.Pod) []string {
	a.t.Helper()
	a.apply(a.t.Context(), desired(true, pods...))
	c := <-a.updates
	c.Commit()
	var got []string
	for _, u := range c.Updates {
		a.core.UpdatePod(u)
		got = append(got, u.UpdateType.String()+" "+string(u.Pod.UID))
	}
	return got
}

// work performs the next work of the pod successfully and returns it as
// "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod", or "" when the
// worker has nothing it may do now.
func (a admitNode) work(uid string) string {
	a.t.Helper()
	w, outcome := a.core.Begin(types.UID(uid))
	if outcome != lifecycle.BeginRun {
		return ""
	}
	a.core.Complete(w, lifecycle.WorkResult{})
	switch w.WorkType {
	case lifecycle.WorkTerminating:
		return "SyncTerminatingPod"
	case lifecycle.WorkTerminated:
		return "SyncTerminatedPod"
	}
	return "SyncPod"
}

// runWorkers runs the pod worker driver over the node's core with syncer,
// and returns what stops it and waits for its goroutines. Every runtime
// status counts as fresh: the fake clock never reaches the cache's time.
func (a admitNode) runWorkers(syncer lifecycle.PodSyncer) (stop func()) {
	n := a.Node
	n.cache = lifecycle.NewCache()
	n.cache.UpdateTime(time.Unix(5000, 0))
	n.pleg = lifecycle.NewPLEG(nil, n.cache, n.clock, nil)
	n.workers = lifecycle.NewWorkers(n.core, syncer, n.cache, nil)
	n.workers.Released = n.workerReleased
	ctx, cancel := context.WithCancel(context.WithoutCancel(a.t.Context()))
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		n.workers.Run(ctx)
	}()
	return func() {
		cancel()
		<-ran
	}
}

// deliver makes pods the desired set and hands the updates to the running
// driver, as the sync loop does.
func (a admitNode) deliver(pods ...*v1.Pod) {
	a.t.Helper()
	a.apply(a.t.Context(), desired(true, pods...))
	c := <-a.updates
	c.Commit()
	for _, u := range c.Updates {
		a.workers.UpdatePod(u)
	}
}

func withHostPort(p *v1.Pod, port int32) *v1.Pod {
	p = p.DeepCopy()
	p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: port}}
	return p
}

// static makes p a static pod (from the manifest directory) named name.
func static(p *v1.Pod, name string) *v1.Pod {
	p = p.DeepCopy()
	p.Name = name
	p.Annotations = map[string]string{lifecycle.ConfigSourceAnnotation: sources.SourceFile}
	return p
}

func same(got []string, want ...string) bool {
	return strings.Join(got, ",") == strings.Join(want, ",")
}

// TestAdmissionCountsStoppingPods: a pod that left the desired set still
// holds its host port while its worker stops it; a new pod that wants the
// port is refused until then, and admitted once the old one is terminated.
func TestAdmissionCountsStoppingPods(t *testing.T) {
	a := newAdmitNode(t)
	old, next := withHostPort(pod("1", "a"), 8080), withHostPort(pod("2", "a"), 8080)
	if got := a.change(old); !same(got, "create 1") {
		t.Fatalf("first change: %q", got)
	}
	if got := a.work("1"); got != "SyncPod" {
		t.Fatalf("pod 1 did %q; want SyncPod", got)
	}
	if got := a.change(); !same(got, "kill 1") { // a forced delete: it left the set, still stopping
		t.Fatalf("removal: %q", got)
	}
	if got := a.change(next); len(got) != 0 || !a.admission.isRejected("2") {
		t.Fatalf("pod 2, wanting the port pod 1 still holds while it stops: updates %q, rejected %t; want it rejected",
			got, a.admission.isRejected("2"))
	}
	// Once pod 1 is terminated the port is free: the same pod under a new
	// UID is admitted.
	if got := a.work("1"); got != "SyncTerminatingPod" {
		t.Fatalf("pod 1 did %q; want SyncTerminatingPod", got)
	}
	third := withHostPort(pod("3", "a"), 8080)
	if got := a.change(third); !same(got, "create 3") {
		t.Fatalf("pod 3 after pod 1 terminated: updates %q; want it admitted", got)
	}
}

// TestAdmissionStaticPodEdit: editing a static pod's manifest gives it a
// new UID, created in the change that kills the old one (or after a
// change that removed the old one, which still stops). The new
// incarnation is not judged against its predecessor (the worker starts it
// only once the predecessor finished, so they never hold the port at
// once), and it does not start before then.
func TestAdmissionStaticPodEdit(t *testing.T) {
	v1Pod := static(withHostPort(pod("1", "a"), 8080), "web")
	v2Pod := static(withHostPort(pod("2", "b"), 8080), "web")
	for _, tc := range []struct {
		name    string
		changes [][]*v1.Pod
		want    [][]string
	}{
		{"edited in one change", [][]*v1.Pod{{v2Pod}}, [][]string{{"create 2", "kill 1"}}},
		{"removed, then added back edited", [][]*v1.Pod{{}, {v2Pod}}, [][]string{{"kill 1"}, {"create 2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAdmitNode(t)
			if got := a.change(v1Pod); !same(got, "create 1") {
				t.Fatalf("first change: %q", got)
			}
			if got := a.work("1"); got != "SyncPod" {
				t.Fatalf("pod 1 did %q; want SyncPod", got)
			}
			for i, pods := range tc.changes {
				if got := a.change(pods...); !same(got, tc.want[i]...) {
					t.Fatalf("change %d: updates %q, rejected %t; want %q, the new incarnation admitted",
						i, got, a.admission.isRejected("2"), tc.want[i])
				}
			}
			if got := a.work("2"); got != "" {
				t.Fatalf("the new incarnation did %q while its predecessor still runs; want nothing", got)
			}
			for _, want := range []string{"SyncTerminatingPod", "SyncTerminatedPod"} {
				if got := a.work("1"); got != want {
					t.Fatalf("pod 1 did %q; want %s", got, want)
				}
			}
			a.core.UpdatePod(lifecycle.UpdatePodOptions{UpdateType: lifecycle.UpdateSync, Pod: v2Pod}) // its retry
			if got := a.work("2"); got != "SyncPod" {
				t.Fatalf("the new incarnation did %q once its predecessor finished; want SyncPod", got)
			}
			// Another pod is still judged against it.
			if got := a.change(v2Pod, withHostPort(pod("3", "a"), 8080)); len(got) != 0 || !a.admission.isRejected("3") {
				t.Fatalf("pod 3 wanting the static pod's port: updates %q; want it rejected", got)
			}
		})
	}
}

// The node's kubernetes.io/hostname is its configured name, as the
// kubelet's with --hostname-override: upstream's Job spec that pins its
// pod with that label to the node's name stayed unschedulable while the
// label was the machine's hostname.
func TestNodeHostnameIsTheNodeName(t *testing.T) {
	n := &Node{cfg: Config{NodeName: "Podhost-Node"}}
	if got := n.nodeFacts().Labels[v1.LabelHostname]; got != "podhost-node" {
		t.Fatalf("kubernetes.io/hostname %q; want the node name, lower-cased", got)
	}
}
