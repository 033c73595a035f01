package manifest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podhost/podhost/sources"
)

// startSource runs a source on dir until the test ends.
func startSource(t *testing.T, dir string, rescan time.Duration) *Source {
	t.Helper()
	s := NewSource(Options{Dir: dir, NodeName: "node1", Rescan: rescan})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return s
}

// lines renders a snapshot as "pod ns/name file" and "error message".
func lines(snap sources.Snapshot) []string {
	var out []string
	for _, p := range snap.Pods {
		out = append(out, "pod "+p.Pod.Namespace+"/"+p.Pod.Name+" "+filepath.Base(p.Origin.Key))
	}
	for _, c := range snap.Claims {
		out = append(out, "pvc "+c.Claim.Namespace+"/"+c.Claim.Name)
	}
	for _, e := range snap.Errors {
		out = append(out, "error "+e.Error())
	}
	return out
}

// waitFor receives snapshots until one renders as want, failing after a
// deadline. It returns the matching snapshot.
func waitFor(t *testing.T, s *Source, dir string, want []string) sources.Snapshot {
	t.Helper()
	deadline := time.After(10 * time.Second)
	var last []string
	for {
		select {
		case snap := <-s.Updates():
			last = lines(snap)
			if strings.ReplaceAll(strings.ReplaceAll(strings.Join(last, "\n"), dir+"/", ""), dir, "DIR") == strings.Join(want, "\n") {
				return snap
			}
		case <-deadline:
			t.Fatalf("no snapshot\n  %q\nlast one\n  %q", want, last)
		}
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func podNamed(name string) string { return strings.Replace(webPod, "name: web", "name: "+name, 1) }

func TestSource(t *testing.T) {
	type step struct {
		do   func(t *testing.T, dir string)
		want []string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"add, delete", []step{
			{func(*testing.T, string) {}, nil},
			{func(t *testing.T, dir string) { write(t, dir, "web.yaml", webPod) }, []string{"pod default/web-node1 web.yaml"}},
			{func(t *testing.T, dir string) { write(t, dir, "api.json", podNamed("api")) }, []string{"pod default/api-node1 api.json", "pod default/web-node1 web.yaml"}},
			{func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "web.yaml")) }, []string{"pod default/api-node1 api.json"}},
		}},
		{"bad file reports its error, others unaffected", []step{
			{func(t *testing.T, dir string) { write(t, dir, "web.yaml", webPod) }, []string{"pod default/web-node1 web.yaml"}},
			{func(t *testing.T, dir string) {
				write(t, dir, "bad.yaml", strings.Replace(webPod, "image:", "imagee:", 1))
			}, []string{
				"pod default/web-node1 web.yaml",
				`error bad.yaml: document 1: unknown field "spec.containers[0].imagee"`}},
			{func(t *testing.T, dir string) { write(t, dir, "bad.yaml", podNamed("fixed")) }, []string{
				"pod default/fixed-node1 bad.yaml", "pod default/web-node1 web.yaml"}},
		}},
		{"a file that holds no object is reported, others unaffected", []step{
			{func(t *testing.T, dir string) {
				write(t, dir, "web.yaml", webPod)
				write(t, dir, "empty.yaml", "")
				write(t, dir, "comments.yaml", "# nothing yet\n---\n")
			}, []string{
				"pod default/web-node1 web.yaml",
				"error comments.yaml: the file holds no object (it is empty or only comments)",
				"error empty.yaml: the file holds no object (it is empty or only comments)"}},
			{func(t *testing.T, dir string) { write(t, dir, "empty.yaml", podNamed("filled")) }, []string{
				"pod default/filled-node1 empty.yaml", "pod default/web-node1 web.yaml",
				"error comments.yaml: the file holds no object (it is empty or only comments)"}},
		}},
		{"dotfiles, editor files and subdirectories are ignored", []step{
			{func(t *testing.T, dir string) {
				for _, name := range []string{".web.yaml.swp", "#web.yaml#", "web.yaml~", "4913", ".hidden"} {
					write(t, dir, name, "garbage: [")
				}
				if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
					t.Fatal(err)
				}
				write(t, dir, "web.yaml", webPod)
			}, []string{"pod default/web-node1 web.yaml"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := startSource(t, dir, time.Hour) // changes must arrive by notification
			for _, st := range tt.steps {
				st.do(t, dir)
				waitFor(t, s, dir, st.want)
			}
		})
	}
}

func TestSourceUIDFollowsContent(t *testing.T) {
	dir := t.TempDir()
	s := startSource(t, dir, time.Hour)
	uid := func(snap sources.Snapshot) string { return string(snap.Pods[0].Pod.UID) }

	write(t, dir, "web.yaml", webPod)
	first := uid(waitFor(t, s, dir, []string{"pod default/web-node1 web.yaml"}))

	write(t, dir, "web.yaml", strings.Replace(webPod, "1.27", "1.28", 1))
	var edited string
	for edited == "" || edited == first {
		edited = uid(waitFor(t, s, dir, []string{"pod default/web-node1 web.yaml"}))
	}

	write(t, dir, "web.yaml", webPod)
	var back string
	for back == "" || back == edited {
		back = uid(waitFor(t, s, dir, []string{"pod default/web-node1 web.yaml"}))
	}
	if back != first {
		t.Errorf("same content returned with uid %s, want the first uid %s", back, first)
	}
}

func TestSourceDirectoryMissingAtStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	s := startSource(t, dir, 10*time.Millisecond) // the directory is found by rescanning
	snap := waitFor(t, s, dir, []string{"error manifest directory DIR: open DIR: no such file or directory"})
	select {
	case <-s.Synced():
	default:
		t.Fatal("Synced not closed after the first snapshot")
	}
	if len(snap.Pods) != 0 {
		t.Fatalf("pods %v, want none", snap.Pods)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "web.yaml", webPod)
	waitFor(t, s, dir, []string{"pod default/web-node1 web.yaml"})
	// Then the directory goes: its pods go too, with an error.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, dir, []string{"error manifest directory DIR: open DIR: no such file or directory"})
}

func TestSourceSyncedOnlyAfterFirstSnapshot(t *testing.T) {
	s := NewSource(Options{Dir: t.TempDir()})
	select {
	case <-s.Synced():
		t.Fatal("Synced closed before Run")
	default:
	}
}

func TestIgnored(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"web.yaml", false}, {"web.json", false}, {"web", false},
		{".web.yaml", true}, {".web.yaml.swp", true}, {"web.yaml~", true}, {"#web.yaml#", true},
		{"web.yaml.swx", true}, {"web.tmp", true}, {"4913", true},
	}
	for _, tt := range tests {
		if got := ignored(tt.name); got != tt.want {
			t.Errorf("ignored(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
