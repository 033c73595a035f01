package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReopenContainerLog(t *testing.T) {
	tests := []struct {
		name     string
		calls    []string // start, stop
		id       string   // "" for the container's
		wantErr  error
		wantFile bool
	}{
		{name: "running container gets its file", calls: []string{"start"}, wantFile: true},
		{name: "created container", wantErr: errPrecondition},
		{name: "exited container", calls: []string{"start", "stop"}, wantErr: errPrecondition},
		{name: "unknown container", id: "container-99", wantErr: errNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			m := newMemory(fixedClock())
			m.configure([]string{"img"}, true)
			dir := t.TempDir()
			sb, err := m.RunSandbox(ctx, Sandbox{Name: "p", UID: "u", LogDirectory: dir})
			if err != nil {
				t.Fatal(err)
			}
			id, err := m.CreateContainer(ctx, Container{SandboxID: sb, Name: "c", Image: "img", LogPath: "c/0.log"})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(dir, "c"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, call := range tt.calls {
				switch call {
				case "start":
					err = m.StartContainer(ctx, id)
				case "stop":
					err = m.StopContainer(ctx, id, 0)
				}
				if err != nil {
					t.Fatalf("%s: %v", call, err)
				}
			}
			if tt.id != "" {
				id = tt.id
			}
			if err := m.ReopenContainerLog(ctx, id); !errors.Is(err, tt.wantErr) {
				t.Errorf("ReopenContainerLog: got %v; want %v", err, tt.wantErr)
			}
			_, err = os.Stat(filepath.Join(dir, "c/0.log"))
			if got := err == nil; got != tt.wantFile {
				t.Errorf("log file exists: got %t (%v); want %t", got, err, tt.wantFile)
			}
		})
	}
}
