package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/podhost/podhost/sdk"
	"github.com/podhost/podhost/sdk/mount"
)

// These tests mount for real, as the plugin does: they need root.

// step is one call of a scenario; want is the error it must match (nil for
// success).
type step struct {
	call string // stage, unstage, publish, unpublish, metrics
	id   string
	path string // staging path for stage/unstage, target path otherwise
	want error
}

func TestScratch(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "round trip", steps: []step{
			{call: "stage", id: "v1", path: "staging"},
			{call: "publish", id: "v1", path: "target"},
			{call: "metrics", id: "v1", path: "target"},
			{call: "unpublish", id: "v1", path: "target"},
			{call: "metrics", id: "v1", path: "target", want: sdk.ErrNotFound},
			{call: "unstage", id: "v1", path: "staging"},
			{call: "publish", id: "v1", path: "target", want: sdk.ErrNotStaged},
		}},
		{name: "every call twice", steps: []step{
			{call: "stage", id: "v1", path: "staging"},
			{call: "stage", id: "v1", path: "staging"},
			{call: "publish", id: "v1", path: "target"},
			{call: "publish", id: "v1", path: "target"},
			{call: "unpublish", id: "v1", path: "target"},
			{call: "unpublish", id: "v1", path: "target"},
			{call: "unstage", id: "v1", path: "staging"},
			{call: "unstage", id: "v1", path: "staging"},
		}},
		{name: "teardown without setup", steps: []step{
			{call: "unpublish", id: "v1", path: "target"},
			{call: "unstage", id: "v1", path: "staging"},
			{call: "unstage", id: "v1", path: "missing"},
		}},
		{name: "another volume's staging path", steps: []step{
			{call: "stage", id: "v1", path: "staging"},
			{call: "stage", id: "v2", path: "staging", want: sdk.ErrAlreadyExists},
			{call: "publish", id: "v2", path: "target", want: sdk.ErrNotStaged},
			{call: "unstage", id: "v2", path: "staging"},
			{call: "publish", id: "v1", path: "target"},
			{call: "unpublish", id: "v1", path: "target"},
			{call: "unstage", id: "v1", path: "staging"},
		}},
		{name: "metrics of a plain directory", steps: []step{
			{call: "metrics", id: "v1", path: "dir", want: sdk.ErrNotFound},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, sub := range []string{"root", "staging", "pod", "pod/dir"} {
				if err := os.Mkdir(filepath.Join(dir, sub), 0o750); err != nil {
					t.Fatal(err)
				}
			}
			abs := func(p, parent string) string {
				if p == "" {
					return ""
				}
				return filepath.Join(dir, parent, p)
			}
			t.Cleanup(func() { // a failed step may leave mounts behind
				for _, p := range []string{abs("target", "pod"), abs("staging", "")} {
					_ = syscall.Unmount(p, syscall.MNT_DETACH)
				}
			})
			s := &scratch{config: sdk.NewConfig(config{Root: filepath.Join(dir, "root")})}
			ctx := context.Background()
			for i, st := range tt.steps {
				var err error
				switch st.call {
				case "stage":
					err = s.Stage(ctx, sdk.StageRequest{VolumeID: st.id, StagingPath: abs(st.path, "")})
				case "unstage":
					err = s.Unstage(ctx, sdk.UnstageRequest{VolumeID: st.id, StagingPath: abs(st.path, "")})
				case "publish":
					err = s.Publish(ctx, sdk.PublishRequest{VolumeID: st.id, StagingPath: filepath.Join(dir, "staging"), TargetPath: abs(st.path, "pod")})
				case "unpublish":
					err = s.Unpublish(ctx, sdk.UnpublishRequest{VolumeID: st.id, TargetPath: abs(st.path, "pod")})
				case "metrics":
					_, err = s.Metrics(ctx, sdk.MetricsRequest{VolumeID: st.id, VolumePath: abs(st.path, "pod")})
				default:
					t.Fatalf("unknown call %q", st.call)
				}
				if !errors.Is(err, st.want) {
					t.Fatalf("step %d %s %s %s: got %v; want %v", i, st.call, st.id, st.path, err, st.want)
				}
			}
			if mounted, err := mount.IsMounted(abs("staging", "")); err != nil || mounted {
				t.Errorf("staging path after the scenario: mounted %v, %v; want it unmounted", mounted, err)
			}
		})
	}
}

func TestConfigure(t *testing.T) {
	tests := []struct {
		name     string
		config   string
		want     int
		wantRoot string
	}{
		{name: "empty", config: "{}", wantRoot: "/var/lib/volume-scratch"},
		{name: "root", config: `{"root":"/srv/scratch"}`, wantRoot: "/srv/scratch"},
		{name: "relative root", config: `{"root":"scratch"}`, want: 1, wantRoot: "/var/lib/volume-scratch"},
		{name: "unknown field", config: `{"size":"1Gi"}`, want: 1, wantRoot: "/var/lib/volume-scratch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPlugin("test")
			if got := p.Configure(context.Background(), []byte(tt.config)); len(got) != tt.want {
				t.Errorf("Configure(%s): got %v; want %d errors", tt.config, got, tt.want)
			}
			if got := p.Volumes.(*scratch).config.Get().Root; got != tt.wantRoot {
				t.Errorf("root after configure(%s): got %q; want %q", tt.config, got, tt.wantRoot)
			}
		})
	}
}
