package runtimemanager

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFindPreviousLog(t *testing.T) {
	root := t.TempDir()
	for _, f := range []struct {
		rel string
		age time.Duration
	}{
		{"default_web_old/app/0.log", time.Hour},
		{"default_web_new/app/0.log", time.Minute},
		{"default_web_new/app/1.log", 0},
		{"default_once_x/app/0.log", 0},
	} {
		p := filepath.Join(root, "pods", f.rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		mt := epoch.Add(-f.age)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		pod, want string
		wantErr   error
	}{
		{"web", "default_web_new/app/0.log", nil},
		{"once", "", ErrNoLog},
		{"nope", "", ErrNoLog},
	} {
		got, err := FindPreviousLog(root, "default", tc.pod, "app")
		if !errors.Is(err, tc.wantErr) || (tc.want != "" && got != filepath.Join(root, "pods", tc.want)) {
			t.Errorf("FindPreviousLog %s: %q, %v; want %q, %v", tc.pod, got, err, tc.want, tc.wantErr)
		}
	}
}
