package crilog

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFollowAcrossRotation follows a log while it is rotated as the host
// does it: the file is renamed, the runtime writes a last line to it
// before it reopens, then writes to a new file at the same path. Both
// lines are followed, in order.
func TestFollowAcrossRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, entries("before"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &syncWriter{wrote: make(chan struct{}, 1)}
	tick := make(chan time.Time)
	polled := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() {
		done <- stream(ctx, w, path, true, nil, func() <-chan time.Time { polled <- struct{}{}; return tick })
	}()
	<-polled

	old, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := os.Rename(path, path+".20240501-100000.000000"); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Write(entries("while rotating")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, entries("after"), 0o644); err != nil {
		t.Fatal(err)
	}
	// One poll finds the end of the old file and moves to the new one; the
	// next reads it.
	for range 2 {
		tick <- time.Time{}
		<-polled
	}
	if got, want := w.String(), "before\nwhile rotating\nafter\n"; got != want {
		t.Fatalf("followed %q; want %q", got, want)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Follow after cancel: %v", err)
	}
}

// TestFollowWhileRotatedFileIsMissing keeps following the old file while
// no new file exists yet (between the rename and the reopen).
func TestFollowWhileRotatedFileIsMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, entries("before"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &syncWriter{wrote: make(chan struct{}, 1)}
	tick := make(chan time.Time)
	polled := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() {
		done <- stream(ctx, w, path, true, nil, func() <-chan time.Time { polled <- struct{}{}; return tick })
	}()
	<-polled
	old, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := os.Rename(path, path+".20240501-100000.000000"); err != nil {
		t.Fatal(err)
	}
	tick <- time.Time{}
	<-polled
	if _, err := old.Write(entries("late")); err != nil {
		t.Fatal(err)
	}
	tick <- time.Time{}
	<-polled
	if got, want := w.String(), "before\nlate\n"; got != want {
		t.Fatalf("followed %q; want %q", got, want)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Follow after cancel: %v", err)
	}
}
