package supervisor

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podhost/podhost/pluginapi"
)

func TestRecordApply(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	spec := PluginSpec{Name: "p", Kind: pluginapi.KindVolume}
	started := inStarted{version: "1.0", capabilities: []string{"c"}, pid: 42, ready: true}
	notReady := inStarted{version: "1.0", pid: 42, notReady: "probe: not ready: warming"}

	type step struct {
		in        input
		state     State
		ready     bool
		restarts  int
		lastError string
		events    []EventType
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"first start ready", []step{
			{inLaunch{}, StateStarting, false, 0, "", nil},
			{started, StateRunning, true, 0, "", []EventType{EventStarted, EventReady}},
		}},
		{"first start not ready, then probe recovers", []step{
			{inLaunch{}, StateStarting, false, 0, "", nil},
			{notReady, StateNotReady, false, 0, "probe: not ready: warming", []EventType{EventStarted, EventNotReady}},
			{inProbe{ready: false, notReady: "again"}, StateNotReady, false, 0, "probe: not ready: warming", nil},
			{inProbe{ready: true}, StateRunning, true, 0, "probe: not ready: warming", []EventType{EventReady}},
			{inProbe{ready: true}, StateRunning, true, 0, "probe: not ready: warming", nil},
			{inProbe{ready: false, notReady: "down"}, StateNotReady, false, 0, "down", []EventType{EventNotReady}},
		}},
		{"exit and restart", []step{
			{inLaunch{}, StateStarting, false, 0, "", nil},
			{started, StateRunning, true, 0, "", []EventType{EventStarted, EventReady}},
			{inExited{err: "gone"}, StateBackoff, false, 0, "gone", []EventType{EventExited}},
			{inLaunch{}, StateStarting, false, 1, "gone", nil},
			{started, StateRunning, true, 1, "gone", []EventType{EventRestarted, EventReady}},
		}},
		{"crash loop counts restarts", []step{
			{inLaunch{}, StateStarting, false, 0, "", nil},
			{inStartFailed{err: "exited early"}, StateBackoff, false, 0, "exited early", []EventType{EventStartFailed}},
			{inLaunch{}, StateStarting, false, 1, "exited early", nil},
			{inStartFailed{err: "exited early"}, StateBackoff, false, 1, "exited early", []EventType{EventStartFailed}},
			{inLaunch{}, StateStarting, false, 2, "exited early", nil},
		}},
		{"refused then fixed", []step{
			{inLaunch{}, StateStarting, false, 0, "", nil},
			{inStartFailed{err: "bad config", refused: true}, StateRefused, false, 0, "bad config", []EventType{EventRefused}},
			{inLaunch{}, StateStarting, false, 1, "bad config", nil},
			{started, StateRunning, true, 1, "bad config", []EventType{EventRestarted, EventReady}},
		}},
		{"probe and exit ignored when not running", []step{
			{inLaunch{}, StateStarting, false, 0, "", nil},
			{inProbe{ready: true}, StateStarting, false, 0, "", nil},
			{inExited{err: "x"}, StateStarting, false, 0, "", nil},
		}},
		{"stopped is terminal", []step{
			{inLaunch{}, StateStarting, false, 0, "", nil},
			{started, StateRunning, true, 0, "", []EventType{EventStarted, EventReady}},
			{inStopped{}, StateStopped, false, 0, "", []EventType{EventStopped}},
			{inLaunch{}, StateStopped, false, 0, "", nil},
			{inStopped{}, StateStopped, false, 0, "", nil},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecord(spec, t0)
			for i, s := range tc.steps {
				prev := r.status
				now := t0.Add(time.Duration(i+1) * time.Second)
				var events []EventType
				r, events = r.apply(s.in, now)
				st := r.status
				if st.State != s.state || st.Ready != s.ready || st.Restarts != s.restarts || st.LastError != s.lastError {
					t.Fatalf("step %d (%T): status = %+v, want state %s ready %v restarts %d last error %q",
						i, s.in, st, s.state, s.ready, s.restarts, s.lastError)
				}
				if !slices.Equal(events, s.events) {
					t.Fatalf("step %d (%T): events = %v, want %v", i, s.in, events, s.events)
				}
				wantSince := prev.Since
				if st.State != prev.State {
					wantSince = now
				}
				if !st.Since.Equal(wantSince) {
					t.Fatalf("step %d (%T): since = %v, want %v", i, s.in, st.Since, wantSince)
				}
				if st.Name != "p" || st.Kind != pluginapi.KindVolume {
					t.Fatalf("step %d: identity lost: %+v", i, st)
				}
			}
		})
	}
}

func TestRecordStartedCopiesInfo(t *testing.T) {
	t.Parallel()
	caps := []string{"a", "b"}
	r := newRecord(PluginSpec{Name: "p"}, time.Time{})
	r, _ = r.apply(inLaunch{}, time.Time{})
	r, _ = r.apply(inStarted{version: "2.0", capabilities: caps, pid: 7, ready: true}, time.Time{})
	caps[0] = "changed"
	if st := r.status; st.Version != "2.0" || st.PID != 7 || !slices.Equal(st.Capabilities, []string{"a", "b"}) {
		t.Errorf("status = %+v", st)
	}
	r, _ = r.apply(inExited{err: "x"}, time.Time{})
	if r.status.PID != 0 {
		t.Errorf("pid after exit = %d, want 0", r.status.PID)
	}
}

func TestSupervisorSurvivesPanickingLaunch(t *testing.T) {
	t.Parallel()
	opts := Options{Backoff: BackoffPolicy{Initial: time.Hour}}.withDefaults()
	sup := newSupervisor(PluginSpec{Name: "p", Kind: pluginapi.KindVolume}, &opts, newHub(opts.Logger))
	sup.launch = func(context.Context) (*instance, inStarted, error) { panic("boom") }
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sup.run(ctx, first)
	}()
	if err := <-first; err == nil || !strings.Contains(err.Error(), "panic: boom") {
		t.Errorf("first launch = %v, want the panic as an error", err)
	}
	if st := sup.status(); st.State != StateBackoff {
		t.Errorf("state = %s, want backoff", st.State)
	}
	cancel()
	<-done
	if st := sup.status(); st.State != StateStopped {
		t.Errorf("state after cancel = %s, want stopped", st.State)
	}
}
