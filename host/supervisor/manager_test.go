package supervisor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
)

func TestStartHandshakeAndChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"automtls", Options{}},
		{"plaintext", Options{DisableAutoMTLS: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newTestHost(t, tc.opts)
			spec := testSpec(t, "vol", behaveOK)
			spec.Config = json.RawMessage(`{"root":"/var/lib/vol"}`)
			spec.Required = true
			sum, err := fileSHA256(spec.Path)
			if err != nil {
				t.Fatal(err)
			}
			spec.SHA256 = sum
			if err := h.Start(t.Context(), []PluginSpec{spec}); err != nil {
				t.Fatalf("Start: %v", err)
			}

			st := h.status(t, "vol")
			if st.State != StateRunning || !st.Ready || st.Version != "1.2.3" || st.PID == 0 ||
				!slices.Equal(st.Capabilities, []string{"volume.metrics"}) || st.Restarts != 0 {
				t.Errorf("status = %+v, want running, ready, version 1.2.3, volume.metrics, a pid, 0 restarts", st)
			}
			if list := h.List(); len(list) != 1 || list[0].Name != "vol" {
				t.Errorf("List = %+v, want the one plugin", list)
			}
			if sid, err := unix.Getsid(st.PID); err != nil || sid != st.PID {
				t.Errorf("plugin session = %d (%v), want its own session %d", sid, err, st.PID)
			}
			entries, err := os.ReadDir(h.socketDir)
			if err != nil || len(entries) == 0 {
				t.Errorf("socket dir %s holds %v (err %v), want the plugin's socket", h.socketDir, entries, err)
			}

			id, err := h.Identity("vol")
			if err != nil {
				t.Fatal(err)
			}
			info, err := id.GetInfo(t.Context(), &pluginv1.GetInfoRequest{})
			if err != nil || info.GetName() != "test-ok" || info.GetKind() != pluginv1.Kind_KIND_VOLUME {
				t.Errorf("GetInfo = %v, %v; want test-ok, volume", info, err)
			}
			probe, err := id.Probe(t.Context(), &pluginv1.ProbeRequest{})
			if err != nil || !probe.GetReady() {
				t.Errorf("Probe = %v, %v; want ready", probe, err)
			}
			cfg, err := id.Configure(t.Context(), &pluginv1.ConfigureRequest{ConfigJson: []byte(`{"root":"rel"}`)})
			if err != nil || len(cfg.GetErrors()) != 1 || cfg.GetErrors()[0].GetField() != "storage.root" {
				t.Errorf("Configure(bad) = %v, %v; want one error on storage.root", cfg, err)
			}
			if _, err := h.Runtime("vol"); !errors.Is(err, ErrUnknownPlugin) {
				t.Errorf("Runtime(volume plugin) = %v, want ErrUnknownPlugin", err)
			}
			if _, err := h.Identity("nope"); !errors.Is(err, ErrUnknownPlugin) {
				t.Errorf("Identity(nope) = %v, want ErrUnknownPlugin", err)
			}
		})
	}
}

func TestStartRefusesPlugin(t *testing.T) {
	t.Parallel()
	otherSum := sha256.Sum256([]byte("something else"))
	tests := []struct {
		name      string
		behaviour string
		edit      func(*PluginSpec)
		want      []string
	}{
		{
			name: "protocol version", behaviour: behaveProto2,
			want: []string{`plugin "p" speaks an incompatible go-plugin protocol`, "host speaks protocol version 1", "Plugin version: 2"},
		},
		{
			name: "contract version", behaviour: behaveContractV0,
			want: []string{`plugin "p" speaks contract versions [v0], host needs v1`},
		},
		{
			name: "kind", behaviour: behaveRuntime,
			want: []string{`plugin "p" is a runtime plugin, spec declares volume`},
		},
		{
			name: "checksum", behaviour: behaveOK,
			edit: func(s *PluginSpec) { s.SHA256 = hex.EncodeToString(otherSum[:]) },
			want: []string{`plugin "p" checksum does not match`, "expected sha256 " + hex.EncodeToString(otherSum[:]), "actual "},
		},
		{
			name: "config", behaviour: behaveOK,
			edit: func(s *PluginSpec) { s.Config = json.RawMessage(`{"root":"relative/dir"}`) },
			want: []string{`plugin "p" rejected its config`, "storage.root: must be an absolute path"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newTestHost(t, Options{Backoff: BackoffPolicy{Initial: time.Hour}})
			spec := testSpec(t, "p", tc.behaviour)
			spec.Required = true
			if tc.edit != nil {
				tc.edit(&spec)
			}
			err := h.Start(t.Context(), []PluginSpec{spec, testSpec(t, "good", behaveOK)})
			if err == nil {
				t.Fatal("Start succeeded, want the required plugin refused")
			}
			if !errors.Is(err, ErrPluginRefused) {
				t.Errorf("Start error %v is not ErrPluginRefused", err)
			}
			for _, want := range append(tc.want, `required plugin "p"`) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Start error %q does not contain %q", err, want)
				}
			}
			if strings.Contains(err.Error(), `"good"`) {
				t.Errorf("Start error %q names the good plugin", err)
			}
			st := h.status(t, "p")
			if st.State != StateRefused || st.Ready || !strings.Contains(st.LastError, tc.want[0]) {
				t.Errorf("status = %+v, want refused with the reason", st)
			}
			id, _ := h.Identity("p")
			if _, err := id.GetInfo(t.Context(), &pluginv1.GetInfoRequest{}); !errors.Is(err, ErrPluginRefused) {
				t.Errorf("call on refused plugin = %v, want ErrPluginRefused", err)
			}
			if st := h.status(t, "good"); st.State != StateRunning {
				t.Errorf("good plugin state = %s, want running", st.State)
			}
		})
	}
}

func TestStartOptionalRefusedIsNotAnError(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, Options{Backoff: BackoffPolicy{Initial: time.Hour}})
	ev := recordEvents(t, h)
	if err := h.Start(t.Context(), []PluginSpec{testSpec(t, "v0", behaveContractV0)}); err != nil {
		t.Fatalf("Start with an optional refused plugin: %v", err)
	}
	if st := h.status(t, "v0"); st.State != StateRefused {
		t.Errorf("state = %s, want refused", st.State)
	}
	waitFor(t, 5*time.Second, "refused and backoff events", func() bool {
		return len(ev.of("v0", EventRefused)) == 1 && len(ev.of("v0", EventBackoff)) == 1
	})
	if !strings.Contains(h.log.String(), "speaks contract versions [v0]") {
		t.Errorf("host log does not say why the plugin was refused:\n%s", h.log)
	}
}

func TestStartRejectsInvalidSpecs(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, Options{})
	err := h.Start(t.Context(), []PluginSpec{
		{Name: "a", Kind: "gpu", Path: "relative"},
		{Name: "b", Kind: "volume", Path: "/bin/b", SHA256: "xyz"},
		{Name: "b", Kind: "volume", Path: "/bin/b"},
	})
	for _, want := range []string{`kind "gpu"`, `path "relative" is not absolute`, `sha256 "xyz"`, `plugin "b" is configured twice`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Start error %v does not contain %q", err, want)
		}
	}
}

func TestPluginLogsForwardedUnderItsName(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, Options{})
	spec := testSpec(t, "logger", behaveOK)
	spec.Config = json.RawMessage(`{"root":"/srv/marker-7f3a"}`)
	if err := h.Start(t.Context(), []PluginSpec{spec}); err != nil {
		t.Fatal(err)
	}
	// go-plugin forwards stderr asynchronously; the line may trail Start.
	var line string
	waitFor(t, 5*time.Second, "the plugin's log line in the host log", func() bool {
		for l := range strings.SplitSeq(h.log.String(), "\n") {
			if strings.Contains(l, logConfigured) {
				line = l
				return true
			}
		}
		return false
	})
	for _, want := range []string{"host.logger", "[INFO]", "/srv/marker-7f3a"} {
		if !strings.Contains(line, want) {
			t.Errorf("forwarded line %q does not contain %q", line, want)
		}
	}
}

func TestProbeNotReadyAtStartThenReady(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, Options{ProbeInterval: 5 * time.Millisecond})
	ev := recordEvents(t, h)
	if err := h.Start(t.Context(), []PluginSpec{testSpec(t, "late", behaveLateReady)}); err != nil {
		t.Fatalf("a plugin not ready at start must start: %v", err)
	}
	waitFor(t, 5*time.Second, "the plugin to become ready", func() bool { return len(ev.of("late", EventReady)) > 0 })
	want := []EventType{EventStarted, EventNotReady, EventReady}
	if got := ev.typesOf("late"); !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	if nr := ev.of("late", EventNotReady); len(nr) != 1 || !strings.Contains(nr[0].Err, "backend warming up") {
		t.Errorf("not-ready event = %+v, want the probe's message", nr)
	}
	if st := h.status(t, "late"); st.State != StateRunning {
		t.Errorf("state = %s, want running", st.State)
	}
}

func TestStopKillsPluginsAndFailsCalls(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, Options{})
	ev := recordEvents(t, h)
	if err := h.Start(t.Context(), []PluginSpec{testSpec(t, "a", behaveOK), testSpec(t, "b", behaveOK)}); err != nil {
		t.Fatal(err)
	}
	pids := []int{h.status(t, "a").PID, h.status(t, "b").PID}
	if err := h.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("plugin process %d still exists after Stop (kill 0: %v)", pid, err)
		}
	}
	for _, st := range h.List() {
		if st.State != StateStopped || st.PID != 0 {
			t.Errorf("status after Stop = %+v, want stopped", st)
		}
	}
	id, _ := h.Identity("a")
	if _, err := id.GetInfo(t.Context(), &pluginv1.GetInfoRequest{}); !errors.Is(err, ErrPluginExited) || !errors.Is(err, ErrNotSent) {
		t.Errorf("call after Stop = %v, want ErrPluginExited and ErrNotSent", err)
	}
	<-ev.done // Stop closes subscriptions
	if got := ev.typesOf("a"); got[len(got)-1] != EventStopped {
		t.Errorf("last event = %v, want stopped", got)
	}
}

func TestCallsOnUnstartedManagerFail(t *testing.T) {
	t.Parallel()
	m := NewManager(Options{})
	if _, err := m.Identity("x"); !errors.Is(err, ErrUnknownPlugin) {
		t.Errorf("Identity before Start = %v, want ErrUnknownPlugin", err)
	}
	if err := m.Stop(context.Background()); err != nil {
		t.Errorf("Stop before Start: %v", err)
	}
}
