package crilog

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// timedEntries writes one full entry a second from t0, "tw\" being a
// partial one.
func timedEntries(texts ...string) []byte {
	var b []byte
	for i, s := range texts {
		partial := len(s) > 0 && s[len(s)-1] == '\\'
		if partial {
			s = s[:len(s)-1]
		}
		b = AppendEntry(b, t0.Add(time.Duration(i)*time.Second), Stdout, partial, []byte(s))
	}
	return b
}

func TestCopyOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, timedEntries("a", "b", "c\\", "d", "e"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"all", Options{Tail: -1}, "a\nb\ncd\ne\n"},
		{"tail 2", Options{Tail: 2}, "cd\ne\n"},
		{"tail 0", Options{Tail: 0}, ""},
		{"tail beyond the start", Options{Tail: 10}, "a\nb\ncd\ne\n"},
		{"since", Options{Tail: -1, Since: t0.Add(time.Second)}, "b\ncd\ne\n"},
		{"since keeps a joined line by its first entry", Options{Tail: -1, Since: t0.Add(2 * time.Second)}, "cd\ne\n"},
		{"since after a line's start drops the whole line", Options{Tail: -1, Since: t0.Add(3 * time.Second)}, "e\n"},
		{"since and tail", Options{Tail: 5, Since: t0.Add(4 * time.Second)}, "e\n"},
		{"timestamps", Options{Tail: 2, Timestamps: true}, "2024-05-01T10:00:02Z cd\n2024-05-01T10:00:04Z e\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Copy(context.Background(), &out, path, tc.opts); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("Copy = %q; want %q", out.String(), tc.want)
			}
		})
	}
}

func TestCopyTailThenFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, timedEntries("a", "b", "c"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &syncWriter{wrote: make(chan struct{}, 1)}
	tick := make(chan time.Time)
	polled := make(chan struct{}, 16)
	ended := false
	done := make(chan error, 1)
	go func() {
		done <- copyLog(context.Background(), w, path, Options{Follow: true, Tail: 1, Done: func() bool { return ended }},
			func() <-chan time.Time { polled <- struct{}{}; return tick })
	}()
	<-polled
	if got := w.String(); got != "c\n" {
		t.Fatalf("tail 1 before appending: %q", got)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(AppendEntry(nil, t0, Stdout, false, []byte("new"))); err != nil {
		t.Fatal(err)
	}
	ended = true // read by copyLog only after the tick below
	tick <- time.Time{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := w.String(); got != "c\nnew\n" {
		t.Errorf("tail 1 then follow: %q; want every line written after the tail", got)
	}
}
