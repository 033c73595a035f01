package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestProbe(t *testing.T) {
	dir, err := os.MkdirTemp("", "containerd-probe-") // short: a socket path is limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "c.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lis.Close() })
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		config    string // empty: not configured
		wantReady bool
		wantMsg   string
	}{
		{name: "not configured", wantMsg: "not configured"},
		{name: "socket exists", config: `{"endpoint":"unix://` + sock + `"}`, wantReady: true, wantMsg: "containerd socket " + sock + " exists"},
		{name: "socket missing", config: `{"endpoint":"unix://` + dir + `/missing.sock"}`, wantMsg: "containerd socket: stat " + dir + "/missing.sock: no such file or directory"},
		{name: "not a socket", config: `{"endpoint":"unix://` + file + `"}`, wantMsg: "containerd endpoint " + file + " is not a socket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPlugin("test")
			if tt.config != "" {
				if errs := p.Configure(context.Background(), []byte(tt.config)); len(errs) > 0 {
					t.Fatalf("Configure: %v", errs)
				}
			}
			ready, msg := p.Probe(context.Background())
			if ready != tt.wantReady || msg != tt.wantMsg {
				t.Errorf("got %v %q; want %v %q", ready, msg, tt.wantReady, tt.wantMsg)
			}
		})
	}
}

func TestConfigureKeepsPreviousConfig(t *testing.T) {
	p := newPlugin("test")
	s := p.Runtime.(*server)
	if errs := p.Configure(context.Background(), []byte(`{"endpoint":"unix:///a.sock"}`)); len(errs) > 0 {
		t.Fatalf("Configure: %v", errs)
	}
	if errs := p.Configure(context.Background(), []byte(`{"endpoint":"b.sock"}`)); len(errs) != 1 {
		t.Fatalf("Configure of a bad config: got %v; want one error", errs)
	}
	if got := s.cfg.Load().socketPath; got != "/a.sock" {
		t.Errorf("socket path after a refused config: got %q; want %q", got, "/a.sock")
	}
}
