package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProbeWithoutContainerd(t *testing.T) {
	dir, err := os.MkdirTemp("", "containerd-probe-") // short: a socket path is limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	// A socket nobody listens on any more: connecting is refused.
	refused := filepath.Join(dir, "refused.sock")
	lis, err := net.ListenUnix("unix", &net.UnixAddr{Name: refused, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	lis.SetUnlinkOnClose(false)
	_ = lis.Close()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		config  string // empty: not configured
		wantMsg string // a prefix of the message
		wantIn  string // and a part of it
	}{
		{name: "not configured", wantMsg: "not configured"},
		{name: "socket missing", config: `{"endpoint":"unix://` + dir + `/missing.sock"}`, wantMsg: "containerd socket: stat " + dir + "/missing.sock: no such file or directory"},
		{name: "not a socket", config: `{"endpoint":"unix://` + file + `"}`, wantMsg: "containerd endpoint " + file + " is not a socket"},
		{name: "connection refused", config: `{"endpoint":"unix://` + refused + `"}`, wantMsg: "containerd at " + refused + " does not answer: version: ", wantIn: "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPlugin("test")
			t.Cleanup(func() { _ = p.Runtime.(*server).rt.Close() })
			if tt.config != "" {
				if errs := p.Configure(t.Context(), []byte(tt.config)); len(errs) > 0 {
					t.Fatalf("Configure: %v", errs)
				}
			}
			ready, msg := p.Probe(t.Context())
			if ready || !strings.HasPrefix(msg, tt.wantMsg) || !strings.Contains(msg, tt.wantIn) {
				t.Errorf("got %v %q; want not ready, %q…%q", ready, msg, tt.wantMsg, tt.wantIn)
			}
		})
	}
}

func TestRuntimeReady(t *testing.T) {
	const name = "containerd 1.6.20 (CRI v1)"
	tests := []struct {
		name      string
		conds     []Condition
		wantReady bool
		wantMsg   string
	}{
		{"ready", []Condition{{Type: "RuntimeReady", Status: true}, {Type: "NetworkReady", Reason: "NetworkPluginNotReady"}}, true, name + " is ready"},
		{"not ready with reason", []Condition{{Type: "RuntimeReady", Reason: "Broken", Message: "runc missing"}}, false, name + " is not ready: RuntimeReady is false (Broken: runc missing)"},
		{"not ready, reason only", []Condition{{Type: "RuntimeReady", Reason: "Broken"}}, false, name + " is not ready: RuntimeReady is false (Broken)"},
		{"not ready, no reason", []Condition{{Type: "RuntimeReady"}}, false, name + " is not ready: RuntimeReady is false (no reason given)"},
		{"no condition", []Condition{{Type: "NetworkReady", Status: true}}, false, name + " does not report RuntimeReady"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ready, msg := runtimeReady(name, tt.conds)
			if ready != tt.wantReady || msg != tt.wantMsg {
				t.Errorf("got %v %q; want %v %q", ready, msg, tt.wantReady, tt.wantMsg)
			}
		})
	}
}

func TestConfigureKeepsPreviousConfig(t *testing.T) {
	p := newPlugin("test")
	rt := p.Runtime.(*server).rt
	t.Cleanup(func() { _ = rt.Close() })
	ctx := context.Background()
	if errs := p.Configure(ctx, []byte(`{"endpoint":"unix:///a.sock"}`)); len(errs) > 0 {
		t.Fatalf("Configure: %v", errs)
	}
	first := rt.current.Load()
	if errs := p.Configure(ctx, []byte(`{"endpoint":"b.sock"}`)); len(errs) != 1 {
		t.Fatalf("Configure of a bad config: got %v; want one error", errs)
	}
	if got := rt.current.Load(); got != first {
		t.Errorf("backend after a refused config: got %+v; want the previous one", got.cfg)
	}
	// The same endpoint keeps the connection; another one gets a new one.
	if errs := p.Configure(ctx, []byte(`{"endpoint":"unix:///a.sock","imagePullPolicy":"Never"}`)); len(errs) > 0 {
		t.Fatalf("Configure: %v", errs)
	}
	if got := rt.current.Load(); got.conn != first.conn || got.cfg.ImagePullPolicy != "Never" {
		t.Errorf("same endpoint: got conn changed %v, pull policy %v; want the same conn and Never", got.conn != first.conn, got.cfg.ImagePullPolicy)
	}
	if errs := p.Configure(ctx, []byte(`{"endpoint":"unix:///c.sock"}`)); len(errs) > 0 {
		t.Fatalf("Configure: %v", errs)
	}
	if got := rt.current.Load(); got.conn == first.conn || got.cfg.socketPath != "/c.sock" || got.main != got.conn {
		t.Errorf("new endpoint: got socket %q, same conn %v, main socket on the CRI conn %v; want /c.sock on a new conn, shared", got.cfg.socketPath, got.conn == first.conn, got.main == got.conn)
	}
	if errs := p.Configure(ctx, []byte(`{"endpoint":"unix:///c.sock","address":"unix:///m.sock"}`)); len(errs) > 0 {
		t.Fatalf("Configure: %v", errs)
	}
	if got := rt.current.Load(); got.main == got.conn || got.cfg.addressPath != "/m.sock" {
		t.Errorf("another main socket: got %q, shared conn %v; want /m.sock on its own conn", got.cfg.addressPath, got.main == got.conn)
	}
}
