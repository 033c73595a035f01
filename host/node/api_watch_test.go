package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
	"github.com/podhost/podhost/sources"
	"github.com/podhost/podhost/sources/apisource"
)

// TestPodWatchStep drives one watch through the changes a node makes and
// checks what it reports, and that a pod whose ref did not change is
// neither copied nor compared (an open watch on a node at rest once cost
// a deep copy and a deep comparison of every pod every 50 ms).
func TestPodWatchStep(t *testing.T) {
	statuses := map[types.UID]v1.PodPhase{}
	built := 0
	w := newPodWatch(func(r podRef) localapi.PodItem {
		built++
		pod := r.pod.DeepCopy()
		if r.withStatus {
			pod.Status.Phase = statuses[pod.UID]
		}
		return localapi.PodItem{Pod: pod, Source: r.source, Error: r.err}
	})
	a := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "ua"}}
	b := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "ub"}}
	aCopy := a.DeepCopy()
	steps := []struct {
		name  string
		setup func()
		refs  []podRef
		want  []string // "TYPE name phase"
		built int      // items built in this step
	}{
		{name: "first pod", refs: []podRef{{pod: a, version: 1, withStatus: true}},
			setup: func() { statuses["ua"] = v1.PodPending },
			want:  []string{"ADDED a Pending"}, built: 1},
		{name: "nothing changed", refs: []podRef{{pod: a, version: 1, withStatus: true}}, built: 0},
		{name: "status version moved", refs: []podRef{{pod: a, version: 2, withStatus: true}},
			setup: func() { statuses["ua"] = v1.PodRunning },
			want:  []string{"MODIFIED a Running"}, built: 1},
		{name: "version moved, same content", refs: []podRef{{pod: a, version: 3, withStatus: true}}, built: 1},
		{name: "same pod, new pointer, same content", refs: []podRef{{pod: aCopy, version: 3, withStatus: true}}, built: 1},
		{name: "second pod", refs: []podRef{{pod: aCopy, version: 3, withStatus: true}, {pod: b, err: "bad"}},
			want: []string{"ADDED b "}, built: 1},
		{name: "error of the second changed", refs: []podRef{{pod: aCopy, version: 3, withStatus: true}, {pod: b, err: "worse"}},
			want: []string{"MODIFIED b "}, built: 1},
		{name: "first gone", refs: []podRef{{pod: b, err: "worse"}},
			want: []string{"DELETED a Running"}, built: 0},
	}
	for _, s := range steps {
		if s.setup != nil {
			s.setup()
		}
		built = 0
		var got []string
		for _, c := range w.step(s.refs) {
			got = append(got, fmt.Sprintf("%s %s %s", c.Type, c.Item.Pod.Name, c.Item.Pod.Status.Phase))
		}
		if fmt.Sprint(got) != fmt.Sprint(s.want) {
			t.Errorf("%s: changes %q, want %q", s.name, got, s.want)
		}
		if built != s.built {
			t.Errorf("%s: built %d items, want %d", s.name, built, s.built)
		}
	}
}

// TestPodWatchWakes checks that an open watch reports a change as it
// happens, not at its next poll: with the poll made an hour long, a new
// status version and a pod added to the desired set must still arrive.
func TestPodWatchWakes(t *testing.T) {
	old := watchPeriod
	watchPeriod = time.Hour
	defer func() { watchPeriod = old }()
	p := pod("1", "busybox")
	for _, tc := range []struct {
		name    string
		initial []*v1.Pod
		change  func(n *Node, clock *lifecycletest.FakeClock)
		want    string // "TYPE name phase"
	}{
		{"a new status version", []*v1.Pod{p}, func(n *Node, _ *lifecycletest.FakeClock) {
			n.status.SetPodStatus(p, v1.PodStatus{Phase: v1.PodRunning})
		}, "MODIFIED p1 Running"},
		{"a pod added to the desired set", nil, func(n *Node, clock *lifecycletest.FakeClock) {
			_, commit := n.desired.apply(desired(true, p), clock.Now())
			commit()
		}, "ADDED p1 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
			n := &Node{desired: newDesiredSet(), status: lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: clock})}
			_, commit := n.desired.apply(desired(true, tc.initial...), clock.Now())
			commit()
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			changes, err := podsAPI{n}.Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(n, clock)
			select {
			case c := <-changes:
				if got := fmt.Sprintf("%s %s %s", c.Type, c.Item.Pod.Name, c.Item.Pod.Status.Phase); got != tc.want {
					t.Fatalf("change %q; want %q", got, tc.want)
				}
			case <-ctx.Done():
				t.Fatalf("the watch did not report %q before its hour-long poll", tc.want)
			}
		})
	}
}

// TestRemovedAPIPodIsNotServedStale checks the gap between the status
// manager deleting a finished pod, which removes it from the API source
// and forgets its status, and the desired set showing the removal: the
// pod is gone, and its copy in the desired set, which still carries the
// status it was applied with, must not be served (a watch woken in that
// gap once reported a Failed pod as Pending before it was DELETED).
func TestRemovedAPIPodIsNotServedStale(t *testing.T) {
	ctx := t.Context()
	clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
	n := &Node{desired: newDesiredSet(), status: lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: clock})}
	n.api = apisource.New(apisource.Options{Persister: &apisource.MemoryPersister{}, NodeName: "node1"})
	if err := n.api.Load(ctx); err != nil {
		t.Fatal(err)
	}
	p, _, err := n.api.Apply(ctx, "test", []byte(jsonPod))
	if err != nil {
		t.Fatal(err)
	}
	_, commit := n.desired.apply(sources.Desired{Synced: true, Pods: []sources.Pod{{Pod: p, Origin: sources.Origin{Source: sources.SourceAPI}}}}, clock.Now())
	commit()
	n.status.SetPodStatus(p, v1.PodStatus{Phase: v1.PodFailed})
	phases := func() []string {
		var out []string
		for _, it := range n.podItems() {
			out = append(out, it.Pod.Name+":"+string(it.Pod.Status.Phase))
		}
		return out
	}
	if got := fmt.Sprint(phases()); got != "[web:Failed]" {
		t.Fatalf("before the removal: %s; want [web:Failed]", got)
	}
	if _, err := n.api.Delete(ctx, p.Namespace, p.Name, apisource.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := n.api.Remove(ctx, p.Namespace, p.Name, p.UID); err != nil {
		t.Fatal(err)
	}
	n.status.RemoveOrphanedStatuses(nil)
	if got := phases(); len(got) != 0 {
		t.Fatalf("removed from the API source, its status forgotten, still in the desired set: served %v; want nothing", got)
	}
}
