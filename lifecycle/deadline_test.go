package lifecycle_test

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// TestActiveDeadline: a pod is past its activeDeadlineSeconds once that
// long has gone by since the start time the node reported; then SyncPod
// reports it Failed with the kubelet's reason and message and terminal
// (so the worker stops its containers), records the kubelet's event, and
// the sync loop stops asking for it. A raised deadline (an update)
// counts from the same start.
func TestActiveDeadline(t *testing.T) {
	e := newStatusEnv()
	rt := lifecycletest.NewFakeRuntime()
	rec := &lifecycletest.FakeRecorder{}
	s := &lifecycle.Syncer{Runtime: rt, Status: e.m, Pods: e.state, Clock: e.clock, Recorder: rec}
	pod := apiPod("1", "p")
	pod.Spec.Containers = pod.Spec.Containers[:1]
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
	sync := func() bool {
		t.Helper()
		terminal, err := s.SyncPod(t.Context(), lifecycle.UpdateSync, pod, nil, &lifecycle.PodStatus{ID: "1"})
		if err != nil {
			t.Fatal(err)
		}
		return terminal
	}

	if s.PastActiveDeadline(pod) || s.DueForDeadline(pod) {
		t.Fatal("a pod never synced (no start time) is past its deadline")
	}
	if sync() {
		t.Fatal("first sync: terminal")
	}
	e.clock.Step(29 * time.Second)
	if s.DueForDeadline(pod) || sync() {
		t.Fatal("29 s into a 30 s deadline: past it")
	}
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) // an update
	e.clock.Step(2 * time.Second)
	if s.DueForDeadline(pod) || sync() {
		t.Fatal("31 s into a deadline raised to 60 s: past it")
	}
	e.clock.Step(29 * time.Second)
	if !s.DueForDeadline(pod) {
		t.Fatal("60 s into a 60 s deadline: the sync loop is not asked to sync it")
	}
	if !sync() {
		t.Fatal("SyncPod past the deadline: not terminal")
	}
	st, _ := e.m.PodStatus("1")
	if st.Phase != v1.PodFailed || st.Reason != "DeadlineExceeded" || st.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("status past the deadline: phase %s reason %q message %q", st.Phase, st.Reason, st.Message)
	}
	if ev := strings.Join(rec.Events(), "\n"); strings.Count(ev, "Normal DeadlineExceeded p: Pod was active on the node longer than the specified deadline") != 1 {
		t.Errorf("events %q; want the kubelet's DeadlineExceeded once", ev)
	}
	if s.DueForDeadline(pod) {
		t.Error("a pod already Failed past its deadline is still due")
	}
}
