package kubenode

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

func TestConditionEvents(t *testing.T) {
	now := metav1.NewTime(time.Unix(1000, 0))
	conds := func(h Health) []v1.NodeCondition {
		return setConditions(nil, wantConditions(h, fullCapacity), now)
	}
	healthy := conds(Health{})
	tests := []struct {
		name          string
		before, after []v1.NodeCondition
		want          []string
	}{
		{"a new node: every condition, Ready last", nil, healthy,
			[]string{"NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID", "NodeReady"}},
		{"a new node not ready yet", nil, conds(Health{NotReady: []string{"runtime down"}}),
			[]string{"NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID", "NodeNotReady"}},
		{"nothing changed", healthy, healthy, nil},
		{"only heartbeat times and messages changed", healthy,
			setConditions(healthy, wantConditions(Health{}, fullCapacity), metav1.NewTime(now.Add(time.Minute))), nil},
		{"ready to not ready", healthy, conds(Health{NotReady: []string{"runtime down"}}), []string{"NodeNotReady"}},
		{"not ready to ready", conds(Health{NotReady: []string{"runtime down"}}), healthy, []string{"NodeReady"}},
		{"a not ready node whose reason changed", conds(Health{NotReady: []string{"a"}}), conds(Health{NotReady: []string{"b"}}), nil},
		{"pressure comes", healthy, conds(Health{MemoryPressure: true, DiskPressure: true, PIDPressure: true}),
			[]string{"NodeHasInsufficientMemory", "NodeHasDiskPressure", "NodeHasInsufficientPID"}},
		{"pressure goes", conds(Health{DiskPressure: true}), healthy, []string{"NodeHasNoDiskPressure"}},
		{"taken over from Unknown (the node controller's, while the node was away)",
			[]v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionUnknown, Reason: "NodeStatusUnknown"},
				{Type: v1.NodeMemoryPressure, Status: v1.ConditionUnknown}, {Type: v1.NodeDiskPressure, Status: v1.ConditionFalse},
				{Type: v1.NodePIDPressure, Status: v1.ConditionFalse}},
			healthy, []string{"NodeHasSufficientMemory", "NodeReady"}},
		{"conditions of others are not ours to report", nil,
			append([]v1.NodeCondition{{Type: "NetworkUnavailable", Status: v1.ConditionFalse}}, healthy...),
			[]string{"NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID", "NodeReady"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := conditionEvents(tt.before, tt.after); !slices.Equal(got, tt.want) {
				t.Errorf("events %v; want %v", got, tt.want)
			}
		})
	}
}

// TestNodeEventsOnTheClock drives Run on the injected clock: the agent
// records Starting and the conditions of the new node once registered,
// nothing on rounds where nothing changed, and NodeNotReady and NodeReady
// when the runtime goes and comes back, at the round that posts the
// change. The events are on the Node, named as the kubelet names them.
func TestNodeEventsOnTheClock(t *testing.T) {
	a, cs, clk := fakeAgent(t)
	rec := record.NewFakeRecorder(100)
	a.o.Recorder = rec
	a.rand = func() float64 { return 0 }
	notReady := runAgent(t, a)
	// settle waits until both loops wait on the clock again: the round a
	// step started is done, its events recorded.
	settle := func(what string) {
		t.Helper()
		end := time.Now().Add(10 * time.Second)
		for clk.Waiters() != 2 {
			if time.Now().After(end) {
				t.Fatalf("%s: %d loops wait on the clock; want 2", what, clk.Waiters())
			}
			time.Sleep(time.Millisecond)
		}
	}
	step := func(what string) {
		t.Helper()
		clk.Step(10 * time.Second) // a status round and a renewal
		settle(what)
	}
	// events returns what was recorded so far.
	events := func() []string {
		var out []string
		for {
			select {
			case e := <-rec.Events:
				out = append(out, e)
			default:
				return out
			}
		}
	}
	check := func(what string, want ...string) {
		t.Helper()
		if got := events(); !slices.Equal(got, want) {
			t.Errorf("%s: events %q; want %q", what, got, want)
		}
	}
	status := func(reason string) string { return "Normal " + reason + " Node n1 status is now: " + reason }

	settle("registered")
	check("registered", "Normal Starting Starting kubelet.", status("NodeHasSufficientMemory"), status("NodeHasNoDiskPressure"),
		status("NodeHasSufficientPID"), status("NodeReady"))
	for range 3 {
		step("a round with nothing changed")
	}
	check("rounds with nothing changed")
	notReady.Store(true)
	step("runtime gone")
	check("runtime gone", status("NodeNotReady"))
	step("runtime still gone")
	check("runtime still gone")
	notReady.Store(false)
	step("runtime back")
	check("runtime back", status("NodeReady"))
	for range 3 {
		step("a round with nothing changed")
	}
	check("rounds with nothing changed")
	if n := countActions(cs, "patch", "nodes"); n != 2 {
		t.Errorf("%d status patches; want the two changes", n)
	}
}

// TestPodEvents: once Run set up the recorder, a pod's events go to it
// against the pod (kubectl describe pod); before Run, none.
func TestPodEvents(t *testing.T) {
	a, _, _ := fakeAgent(t)
	rec := record.NewFakeRecorder(100)
	a.o.Recorder = rec
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1"}}
	a.PodEvent(pod, v1.EventTypeNormal, "Early", "before Run")
	runAgent(t, a)
	<-a.registered
	a.PodEvent(pod, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case e := <-rec.Events:
			if strings.Contains(e, "Early") {
				t.Fatalf("an event before Run was recorded: %s", e)
			}
			if e == "Warning BackOff Back-off restarting failed container" {
				return
			}
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("the pod's event was not recorded")
}
