package supervisor

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
)

func kill(t *testing.T, pid int) {
	t.Helper()
	if pid == 0 {
		t.Fatal("no plugin process to kill")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %d: %v", pid, err)
	}
}

func TestKilledPluginDetectedAndCallsFail(t *testing.T) {
	t.Parallel()
	// A back-off of an hour keeps the plugin down after the kill.
	h := newTestHost(t, Options{Backoff: BackoffPolicy{Initial: time.Hour}})
	ev := recordEvents(t, h)
	if err := h.Start(t.Context(), []PluginSpec{testSpec(t, "vol", behaveOK)}); err != nil {
		t.Fatal(err)
	}
	id, _ := h.Identity("vol")
	kill(t, h.status(t, "vol").PID)
	waitFor(t, time.Second, "the exit to be detected", func() bool { return h.status(t, "vol").State == StateBackoff })

	st := h.status(t, "vol")
	if st.Ready || st.PID != 0 || !strings.Contains(st.LastError, "plugin exited (signal: killed)") {
		t.Errorf("status = %+v, want not ready, no pid, exited", st)
	}
	waitFor(t, 5*time.Second, "an exited event", func() bool { return len(ev.of("vol", EventExited)) == 1 })
	if entries, err := os.ReadDir(h.socketDir); err != nil || len(entries) != 0 {
		t.Errorf("socket dir holds %v (err %v) after the plugin died, want it cleaned", entries, err)
	}
	_, err := id.GetInfo(t.Context(), &pluginv1.GetInfoRequest{})
	if !errors.Is(err, ErrPluginExited) || !strings.Contains(err.Error(), `"vol"`) {
		t.Errorf("call while down = %v, want ErrPluginExited naming the plugin", err)
	}
}

func TestInFlightCallFailsWhenPluginDies(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, Options{Backoff: BackoffPolicy{Initial: time.Hour}})
	if err := h.Start(t.Context(), []PluginSpec{testSpec(t, "vol", behaveBlockProbe)}); err != nil {
		t.Fatal(err)
	}
	id, _ := h.Identity("vol")
	errc := make(chan error, 1)
	go func() {
		_, err := id.Probe(t.Context(), &pluginv1.ProbeRequest{})
		errc <- err
	}()
	waitFor(t, 5*time.Second, "the probe to block in the plugin", func() bool {
		return strings.Contains(h.log.String(), logProbeBlocked)
	})
	kill(t, h.status(t, "vol").PID)
	select {
	case err := <-errc:
		if !errors.Is(err, ErrPluginExited) || !strings.Contains(err.Error(), `plugin "vol"`) {
			t.Errorf("in-flight call = %v, want ErrPluginExited naming the plugin", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("in-flight call did not fail after the plugin was killed")
	}
}

func TestRestartWithGrowingBackoff(t *testing.T) {
	t.Parallel()
	policy := BackoffPolicy{Initial: time.Millisecond, Max: 4 * time.Millisecond, ResetAfter: time.Hour}
	h := newTestHost(t, Options{Backoff: policy})
	ev := recordEvents(t, h)
	if err := h.Start(t.Context(), []PluginSpec{testSpec(t, "vol", behaveOK)}); err != nil {
		t.Fatal(err)
	}
	id, _ := h.Identity("vol")
	const kills = 4
	for i := 1; i <= kills; i++ {
		pid := h.status(t, "vol").PID
		kill(t, pid)
		waitFor(t, 10*time.Second, "the plugin to restart", func() bool {
			st := h.status(t, "vol")
			return st.State == StateRunning && st.PID != pid && len(ev.of("vol", EventRestarted)) == i
		})
		if st := h.status(t, "vol"); st.Restarts != i {
			t.Errorf("after kill %d: restarts = %d", i, st.Restarts)
		}
		if _, err := id.GetInfo(t.Context(), &pluginv1.GetInfoRequest{}); err != nil {
			t.Errorf("after restart %d: GetInfo: %v", i, err)
		}
	}
	var delays []time.Duration
	for _, e := range ev.of("vol", EventBackoff) {
		delays = append(delays, e.Delay)
	}
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 4 * time.Millisecond}
	if !slices.Equal(delays, want) {
		t.Errorf("back-off delays = %v, want %v", delays, want)
	}
	wantTypes := []EventType{EventStarted, EventReady}
	for range kills {
		wantTypes = append(wantTypes, EventExited, EventBackoff, EventRestarted, EventReady)
	}
	if got := ev.typesOf("vol"); !slices.Equal(got, wantTypes) {
		t.Errorf("events = %v, want %v", got, wantTypes)
	}
}

func TestCrashLoopingPluginStaysInBackoff(t *testing.T) {
	t.Parallel()
	policy := BackoffPolicy{Initial: time.Millisecond, Max: 8 * time.Millisecond, ResetAfter: time.Hour}
	h := newTestHost(t, Options{Backoff: policy})
	ev := recordEvents(t, h)
	if err := h.Start(t.Context(), []PluginSpec{testSpec(t, "crash", behaveCrash), testSpec(t, "good", behaveOK)}); err != nil {
		t.Fatalf("an optional crashing plugin must not fail Start: %v", err)
	}
	const attempts = 6
	waitFor(t, 20*time.Second, "six failed launches", func() bool { return len(ev.of("crash", EventBackoff)) >= attempts })
	var delays []time.Duration
	for _, e := range ev.of("crash", EventBackoff)[:attempts] {
		delays = append(delays, e.Delay)
	}
	want := []time.Duration{1, 2, 4, 8, 8, 8}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(delays, want) {
		t.Errorf("back-off delays = %v, want %v", delays, want)
	}
	st := h.status(t, "crash")
	if st.Ready || st.Restarts < attempts-1 || st.State == StateRunning || !strings.Contains(st.LastError, `launch plugin "crash"`) ||
		!strings.Contains(st.LastError, "no go-plugin handshake") || !strings.Contains(st.LastError, "exit status 3") {
		t.Errorf("crashing plugin status = %+v, want not ready, restarting, with its last error", st)
	}
	if len(ev.of("crash", EventStarted, EventRestarted, EventReady)) != 0 {
		t.Errorf("crashing plugin reported as started: %v", ev.typesOf("crash"))
	}
	id, _ := h.Identity("good")
	if _, err := id.GetInfo(t.Context(), &pluginv1.GetInfoRequest{}); err != nil {
		t.Errorf("the other plugin stopped working: %v", err)
	}
	if st := h.status(t, "good"); st.State != StateRunning || st.Restarts != 0 {
		t.Errorf("the other plugin: %+v", st)
	}
}

func TestRequiredCrashingPluginFailsStart(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, Options{Backoff: BackoffPolicy{Initial: time.Hour}})
	spec := testSpec(t, "crash", behaveCrash)
	spec.Required = true
	err := h.Start(t.Context(), []PluginSpec{spec})
	if err == nil || !strings.Contains(err.Error(), `required plugin "crash" did not start`) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Start = %v, want an error naming the required plugin", err)
	}
	if st := h.status(t, "crash"); st.State != StateBackoff {
		t.Errorf("state = %s, want backoff", st.State)
	}
}
