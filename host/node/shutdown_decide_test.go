package node

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/state"
)

func shutdownPod(uid string, grace *int64, deleting bool) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "default", UID: types.UID(uid)}}
	p.Spec.TerminationGracePeriodSeconds = grace
	if deleting {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	}
	return p
}

func TestPlanShutdown(t *testing.T) {
	phases := map[types.UID]v1.PodPhase{
		"running": v1.PodRunning, "pending": v1.PodPending, "done": v1.PodSucceeded,
		"failed": v1.PodFailed, "deleting": v1.PodRunning, "short": v1.PodRunning,
		"deleting-soon": v1.PodRunning, "deleted-done": v1.PodSucceeded,
	}
	status := func(uid types.UID) (v1.PodStatus, bool) {
		p, ok := phases[uid]
		return v1.PodStatus{Phase: p}, ok
	}
	pods := []*v1.Pod{
		shutdownPod("running", new(int64(120)), false),
		shutdownPod("pending", nil, false),
		shutdownPod("done", nil, false),
		shutdownPod("failed", nil, false),
		shutdownPod("deleting", nil, true),
		shutdownPod("short", new(int64(2)), false),
		shutdownPod("new", nil, false), // no status yet
		shutdownPod("deleting-soon", new(int64(600)), true),
		shutdownPod("deleted-done", nil, true),
	}
	pods[7].DeletionGracePeriodSeconds = new(int64(3))
	got := planShutdown(pods, status, 10*time.Second)
	want := []struct {
		uid      string
		phase    v1.PodPhase
		grace    int64
		deleting bool
	}{
		{"running", v1.PodRunning, 10, false}, // capped by the node's budget
		{"pending", v1.PodPending, 10, false}, // default 30 s, capped
		{"deleting", "", 10, true},            // held to the budget, keeps no phase
		{"short", v1.PodRunning, 2, false},    // its own, shorter
		{"new", v1.PodPending, 10, false},     // no status: Pending
		{"deleting-soon", "", 3, true},        // its deletion's, shorter
	}
	if len(got) != len(want) {
		t.Fatalf("planShutdown picked %d pods, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if g := got[i]; string(g.pod.UID) != w.uid || g.phase != w.phase || g.grace != w.grace || g.deleting != w.deleting {
			t.Errorf("target %d = %s phase %q grace %d deleting %t; want %s phase %q grace %d deleting %t",
				i, g.pod.UID, g.phase, g.grace, g.deleting, w.uid, w.phase, w.grace, w.deleting)
		}
	}
}

func TestShutdownGrace(t *testing.T) {
	for _, tc := range []struct {
		pod    *int64
		budget time.Duration
		want   int64
	}{
		{nil, 30 * time.Second, 30},
		{nil, 45 * time.Second, 30},
		{new(int64(5)), 30 * time.Second, 5},
		{new(int64(60)), 1500 * time.Millisecond, 1},
		{new(int64(60)), 0, 0},
		{new(int64(0)), time.Minute, 0},
	} {
		if got := shutdownGrace(shutdownPod("p", tc.pod, false), tc.budget); got != tc.want {
			t.Errorf("shutdownGrace(pod %v, budget %s) = %d; want %d", tc.pod, tc.budget, got, tc.want)
		}
	}
}

// TestMarkShutdownStatus: whatever phase the stopped containers would
// give (Failed for a killed restartPolicy Never pod), the pod keeps the
// phase it had, never a terminal one, with reason NodeShutdown.
func TestMarkShutdownStatus(t *testing.T) {
	for _, tc := range []struct {
		kept, generated, want v1.PodPhase
	}{
		{v1.PodRunning, v1.PodFailed, v1.PodRunning},
		{v1.PodRunning, v1.PodSucceeded, v1.PodRunning},
		{v1.PodPending, v1.PodFailed, v1.PodPending},
		{v1.PodRunning, v1.PodRunning, v1.PodRunning},
		{"", v1.PodFailed, v1.PodPending},
		{v1.PodFailed, v1.PodFailed, v1.PodPending}, // never planned; still not Failed by the shutdown
	} {
		s := v1.PodStatus{Phase: tc.generated, Reason: "Error", Message: "exit 137"}
		markShutdownStatus(tc.kept, &s)
		if s.Phase != tc.want || s.Reason != ReasonNodeShutdown || s.Message != nodeShutdownMessage {
			t.Errorf("kept %q, generated %q: got %q %q %q; want %q %q", tc.kept, tc.generated, s.Phase, s.Reason, s.Message, tc.want, ReasonNodeShutdown)
		}
	}
}

func TestRecordsToRestart(t *testing.T) {
	mark := state.ShutdownMark{Pods: []types.UID{"a", "b", "gone"}}
	recs := []state.PodRecord{
		{Name: "a", UID: "a", Status: v1.PodStatus{Phase: v1.PodRunning, Reason: ReasonNodeShutdown}},
		{Name: "b", UID: "b", Status: v1.PodStatus{Phase: v1.PodSucceeded}, Terminal: true}, // finished meanwhile: stays
		{Name: "c", UID: "c", Status: v1.PodStatus{Phase: v1.PodRunning}},                   // not stopped by the shutdown
		{Name: "a2", UID: "a-new", Status: v1.PodStatus{Phase: v1.PodPending}},              // another UID under a new name
	}
	got := recordsToRestart(mark, recs)
	if len(got) != 1 || got[0].UID != "a" {
		t.Fatalf("recordsToRestart = %+v; want only a", got)
	}
	if got := recordsToRestart(state.ShutdownMark{}, recs); len(got) != 0 {
		t.Errorf("an empty mark restarts %+v; want nothing", got)
	}
}
