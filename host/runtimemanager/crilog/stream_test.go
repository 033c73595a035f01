package crilog

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

func entries(lines ...string) []byte {
	var b []byte
	for _, l := range lines {
		partial := strings.HasSuffix(l, "\\")
		b = AppendEntry(b, t0, Stdout, partial, []byte(strings.TrimSuffix(l, "\\")))
	}
	return b
}

func TestStreamJoinsPartialsAndSkipsGarbage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	data := append(entries("one", "tw\\", "o"), "garbage line\n"...)
	data = append(data, entries("three")...)
	data = append(data, "2024-05-01T10:00:00Z stdout F no newline"...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Copy(context.Background(), &out, path, Options{Tail: -1}); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "one\ntwo\nthree\nno newline\n"; got != want {
		t.Errorf("Stream = %q; want %q", got, want)
	}
}

func TestStreamMissingFile(t *testing.T) {
	if err := Copy(context.Background(), &bytes.Buffer{}, filepath.Join(t.TempDir(), "none.log"), Options{Tail: -1}); err == nil {
		t.Error("Stream of a missing file: got nil error")
	}
}

// syncWriter records writes and signals each one.
type syncWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, _ := w.buf.Write(p)
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return n, nil
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestStreamFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, entries("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &syncWriter{wrote: make(chan struct{}, 1)}
	// The poll wait is a channel the test fires, so no real time passes.
	tick := make(chan time.Time)
	polled := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() {
		done <- copyLog(ctx, w, path, Options{Follow: true, Tail: -1}, func() <-chan time.Time { polled <- struct{}{}; return tick })
	}()
	<-polled // first content read, waiting
	if got := w.String(); got != "first\n" {
		t.Fatalf("before append: got %q", got)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := entries("second")
	// Half a line is held back until its newline arrives.
	if _, err := f.Write(line[:10]); err != nil {
		t.Fatal(err)
	}
	tick <- time.Time{}
	<-polled
	if got := w.String(); got != "first\n" {
		t.Fatalf("after half a line: got %q; want only the first line", got)
	}
	if _, err := f.Write(line[10:]); err != nil {
		t.Fatal(err)
	}
	tick <- time.Time{}
	<-polled
	if got := w.String(); got != "first\nsecond\n" {
		t.Fatalf("after the rest: got %q", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Stream after cancel: %v", err)
	}
}

func TestFollowEndsWhenDone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, entries("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	checks := 0
	// done is asked at the end of the file; the last line is appended
	// just before it says true, as when a container writes and exits.
	doneFn := func() bool {
		checks++
		if checks == 2 {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write(entries("last")); err != nil {
				t.Fatal(err)
			}
			return true
		}
		return false
	}
	tick := make(chan time.Time, 1)
	err := copyLog(context.Background(), &buf, path, Options{Follow: true, Done: doneFn, Tail: -1}, func() <-chan time.Time { tick <- time.Time{}; return tick })
	if err != nil {
		t.Fatalf("Follow: %v", err)
	}
	if got := buf.String(); got != "first\nlast\n" {
		t.Fatalf("Follow: got %q; want both lines", got)
	}
}
