package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/podhost/podhost/internal/testutil"
	"github.com/podhost/podhost/pluginapi"
)

// waitFor polls cond until it holds or timeout passes, then fails the test
// with what.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		<-tick.C
	}
}

// testExecutable is the test binary, which serves as every test plugin.
func testExecutable(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// testSpec is a volume plugin spec running the test binary as behaviour.
func testSpec(t testing.TB, name, behaviour string) PluginSpec {
	return PluginSpec{
		Name: name,
		Kind: pluginapi.KindVolume,
		Path: testExecutable(t),
		Args: []string{pluginArg, behaviour},
	}
}

// testHost is a Manager under test with its log captured.
type testHost struct {
	*Manager
	log       *testutil.SyncBuffer
	socketDir string
}

// newTestHost returns a Manager with millisecond back-off and no periodic
// probes unless opts says otherwise; it is stopped when the test ends.
func newTestHost(t testing.TB, opts Options) *testHost {
	t.Helper()
	log := &testutil.SyncBuffer{}
	opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "host", Output: log, Level: hclog.Debug})
	if opts.SocketDir == "" {
		opts.SocketDir = filepath.Join(t.TempDir(), "plugins")
	}
	if opts.Backoff == (BackoffPolicy{}) {
		opts.Backoff = BackoffPolicy{Initial: time.Millisecond, Max: 8 * time.Millisecond, ResetAfter: time.Hour}
	}
	if opts.ProbeInterval == 0 {
		opts.ProbeInterval = time.Hour
	}
	h := &testHost{Manager: NewManager(opts), log: log, socketDir: opts.SocketDir}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return h
}

func (h *testHost) status(t testing.TB, name string) PluginStatus {
	t.Helper()
	st, err := h.Status(name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// recorder collects the events of a subscription.
type recorder struct {
	mu     sync.Mutex
	events []Event
	done   chan struct{}
}

// recordEvents subscribes to h's events until the test ends.
func recordEvents(t testing.TB, h *testHost) *recorder {
	ch, cancel := h.Subscribe()
	r := &recorder{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for ev := range ch {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// of returns the events of one plugin, optionally only of the given types.
func (r *recorder) of(plugin string, types ...EventType) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, ev := range r.events {
		if ev.Plugin == plugin && (len(types) == 0 || slices.Contains(types, ev.Type)) {
			out = append(out, ev)
		}
	}
	return out
}

// typesOf returns the event types of one plugin, in order.
func (r *recorder) typesOf(plugin string) []EventType {
	var out []EventType
	for _, ev := range r.of(plugin) {
		out = append(out, ev.Type)
	}
	return out
}
