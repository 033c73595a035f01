package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

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
			{call: "metrics", id: "v1", path: "target", want: errNotPublished},
			{call: "unstage", id: "v1", path: "staging"},
			{call: "publish", id: "v1", path: "target", want: errNotStaged},
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
			{call: "stage", id: "v2", path: "staging", want: errOtherVolume},
			{call: "publish", id: "v2", path: "target", want: errNotStaged},
			{call: "unstage", id: "v2", path: "staging"},
			{call: "publish", id: "v1", path: "target"},
		}},
		{name: "target path is a file", steps: []step{
			{call: "stage", id: "v1", path: "staging"},
			{call: "publish", id: "v1", path: "file", want: errOtherVolume},
			{call: "metrics", id: "v1", path: "file", want: errNotPublished},
		}},
		{name: "empty arguments", steps: []step{
			{call: "stage", id: "", path: "staging", want: errInvalid},
			{call: "stage", id: "v1", path: "", want: errInvalid},
			{call: "unstage", id: "", path: "staging", want: errInvalid},
			{call: "publish", id: "v1", path: "", want: errInvalid},
			{call: "unpublish", id: "", path: "target", want: errInvalid},
			{call: "metrics", id: "v1", path: "", want: errInvalid},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, sub := range []string{"staging", "pod"} {
				if err := os.Mkdir(filepath.Join(dir, sub), 0o750); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "pod", "file"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			s := &scratch{statfs: func(string) (Usage, error) { return Usage{TotalBytes: 1}, nil }}
			abs := func(p, parent string) string {
				if p == "" {
					return ""
				}
				return filepath.Join(dir, parent, p)
			}
			ctx := context.Background()
			for i, st := range tt.steps {
				var err error
				switch st.call {
				case "stage":
					err = s.Stage(ctx, st.id, abs(st.path, ""))
				case "unstage":
					err = s.Unstage(ctx, st.id, abs(st.path, ""))
				case "publish":
					err = s.Publish(ctx, st.id, filepath.Join(dir, "staging"), abs(st.path, "pod"), false)
				case "unpublish":
					err = s.Unpublish(ctx, st.id, abs(st.path, "pod"))
				case "metrics":
					_, err = s.Metrics(ctx, st.id, abs(st.path, "pod"))
				default:
					t.Fatalf("unknown call %q", st.call)
				}
				if !errors.Is(err, st.want) {
					t.Fatalf("step %d %s %s %s: got %v; want %v", i, st.call, st.id, st.path, err, st.want)
				}
			}
		})
	}
}

func TestUsageOf(t *testing.T) {
	tests := []struct {
		name                                string
		blocks, bfree, bavail, files, ffree uint64
		frsize, bsize                       int64
		want                                Usage
	}{
		{
			name: "ext4 with reserved blocks", blocks: 100, bfree: 40, bavail: 30, files: 50, ffree: 20, frsize: 4096, bsize: 4096,
			want: Usage{TotalBytes: 409600, UsedBytes: 245760, AvailableBytes: 122880, TotalInodes: 50, UsedInodes: 30, AvailableInodes: 20},
		},
		{
			name: "no fragment size", blocks: 10, bfree: 10, bavail: 10, frsize: 0, bsize: 512,
			want: Usage{TotalBytes: 5120, AvailableBytes: 5120},
		},
		{
			name: "inconsistent counts are clamped", blocks: 10, bfree: 20, bavail: 30, files: 5, ffree: 9, frsize: 1,
			want: Usage{TotalBytes: 10, AvailableBytes: 10, TotalInodes: 5, AvailableInodes: 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := usageOf(tt.blocks, tt.bfree, tt.bavail, tt.files, tt.ffree, tt.frsize, tt.bsize); got != tt.want {
				t.Errorf("got %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestConfigure(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   int
	}{
		{name: "empty", config: "{}", want: 0},
		{name: "unknown field", config: `{"size":"1Gi"}`, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := configure(context.Background(), []byte(tt.config)); len(got) != tt.want {
				t.Errorf("configure(%s): got %v; want %d errors", tt.config, got, tt.want)
			}
		})
	}
}
