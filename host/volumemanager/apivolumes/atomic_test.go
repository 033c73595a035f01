package apivolumes

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// listing renders what a container sees in dir: each visible path (through
// the links) with its content, and the hidden entries apart.
func listing(t *testing.T, dir string) (visible []string, hidden int) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") {
			hidden++
			continue
		}
		_ = filepath.Walk(filepath.Join(dir, e.Name())+"/", func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			visible = append(visible, rel+"="+string(b)+" "+info.Mode().Perm().String())
			return nil
		})
		if info, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && !info.IsDir() {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			visible = append(visible, e.Name()+"="+string(b)+" "+info.Mode().Perm().String())
		}
	}
	sort.Strings(visible)
	return visible, hidden
}

func TestWriteAtomic(t *testing.T) {
	type step struct {
		files map[string]File
		wrote bool
		want  string // visible files, comma-separated
	}
	f := func(s string) File { return File{Data: []byte(s), Mode: 0o644} }
	tests := []struct {
		name  string
		steps []step
	}{
		{"first write, then the same files change nothing", []step{
			{map[string]File{"token": f("t1"), "ca.crt": f("ca")}, true, "ca.crt=ca -rw-r--r--,token=t1 -rw-r--r--"},
			{map[string]File{"token": f("t1"), "ca.crt": f("ca")}, false, "ca.crt=ca -rw-r--r--,token=t1 -rw-r--r--"},
		}},
		{"a changed file is swapped, a dropped one goes", []step{
			{map[string]File{"token": f("t1"), "namespace": f("default")}, true, "namespace=default -rw-r--r--,token=t1 -rw-r--r--"},
			{map[string]File{"token": f("t2")}, true, "token=t2 -rw-r--r--"},
		}},
		{"nested paths and modes", []step{
			{map[string]File{"a/b/c": f("x"), "d": {Data: []byte("y"), Mode: 0o400}}, true, "a/b/c=x -rw-r--r--,d=y -r--------"},
			{map[string]File{"a/b/c": {Data: []byte("x"), Mode: 0o600}}, true, "a/b/c=x -rw-------"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "vol")
			for i, st := range tt.steps {
				wrote, err := WriteAtomic(dir, st.files, nil)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if wrote != st.wrote {
					t.Errorf("step %d: wrote %v, want %v", i, wrote, st.wrote)
				}
				got, hidden := listing(t, dir)
				if strings.Join(got, ",") != st.want {
					t.Errorf("step %d: files %q, want %q", i, got, st.want)
				}
				if hidden != 2 { // ..data and one version directory
					t.Errorf("step %d: %d hidden entries, want 2 (..data and the current version)", i, hidden)
				}
				if target, err := os.Readlink(filepath.Join(dir, dataLink)); err != nil || !strings.HasPrefix(target, "..version-") {
					t.Errorf("step %d: ..data -> %q (%v)", i, target, err)
				}
			}
		})
	}
}

func TestWriteAtomicRefusesBadPaths(t *testing.T) {
	for _, p := range []string{"/abs", "../up", "a/../../b", "..data", ""} {
		if _, err := WriteAtomic(t.TempDir(), map[string]File{p: {Data: []byte("x"), Mode: 0o644}}, nil); err == nil || !strings.Contains(err.Error(), "file path") {
			t.Errorf("path %q: err %v; want a file path error", p, err)
		}
	}
}
