package lifecycle_test

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// probeCalls records what the syncer asks of the probe manager.
type probeCalls struct{ calls []string }

func (p *probeCalls) AddPod(pod *v1.Pod)      { p.calls = append(p.calls, "add "+string(pod.UID)) }
func (p *probeCalls) StopPod(uid types.UID)   { p.calls = append(p.calls, "stop "+string(uid)) }
func (p *probeCalls) RemovePod(uid types.UID) { p.calls = append(p.calls, "remove "+string(uid)) }
func (p *probeCalls) reset() (out []string)   { out, p.calls = p.calls, nil; return out }
func (p *probeCalls) want(t *testing.T, w ...string) {
	t.Helper()
	if got := p.reset(); !slices.Equal(got, w) {
		t.Fatalf("probe calls: %q; want %q", got, w)
	}
}

// TestSyncerRunsProbesWhileThePodMayRun checks that probes start with the
// pod's first SyncPod, stop as soon as it terminates (before the kill),
// and are forgotten once it is terminated; a SyncPod refused because
// termination was requested starts none.
func TestSyncerRunsProbesWhileThePodMayRun(t *testing.T) {
	e := newStatusEnv()
	pod := apiPod("1", "p")
	rt := lifecycletest.NewFakeRuntime()
	probes := &probeCalls{}
	s := &lifecycle.Syncer{Runtime: rt, Status: e.m, Pods: e.state, Probes: probes}
	status := &lifecycle.PodStatus{ID: "1"}
	if _, err := s.SyncPod(t.Context(), lifecycle.UpdateCreate, pod, nil, status); err != nil {
		t.Fatal(err)
	}
	probes.want(t, "add 1")
	if err := s.SyncTerminatingPod(t.Context(), pod, status, nil, nil); err != nil {
		t.Fatal(err)
	}
	probes.want(t, "stop 1")
	if err := s.SyncTerminatedPod(t.Context(), pod, status); err != nil {
		t.Fatal(err)
	}
	probes.want(t, "remove 1")

	e.state.terminating["2"] = true
	if _, err := s.SyncPod(t.Context(), lifecycle.UpdateCreate, apiPod("2", "q"), nil, &lifecycle.PodStatus{ID: "2"}); err == nil {
		t.Fatal("SyncPod of a terminating pod: no error")
	}
	probes.want(t)
}
