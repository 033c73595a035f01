package crilog

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// follower is a Stream with follow on a file, whose poll waits the test
// ends by hand.
type follower struct {
	t      *testing.T
	w      *syncWriter
	tick   chan time.Time
	polled chan struct{}
	cancel context.CancelFunc
	done   chan error
}

// startFollow follows path, whose first entry is before, and returns once
// that is read.
func startFollow(t *testing.T, path string) *follower {
	t.Helper()
	if err := os.WriteFile(path, entries("before"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &follower{t: t, w: &syncWriter{wrote: make(chan struct{}, 1)}, tick: make(chan time.Time),
		polled: make(chan struct{}, 16), cancel: cancel, done: make(chan error, 1)}
	go func() {
		f.done <- copyLog(ctx, f.w, path, Options{Follow: true, Tail: -1}, func() <-chan time.Time { f.polled <- struct{}{}; return f.tick })
	}()
	<-f.polled
	t.Cleanup(cancel)
	return f
}

// poll ends one wait and waits for the next.
func (f *follower) poll() {
	f.tick <- time.Time{}
	<-f.polled
}

// stop ends the follow and checks what it copied.
func (f *follower) stop(want string) {
	f.t.Helper()
	if got := f.w.String(); got != want {
		f.t.Errorf("followed %q; want %q", got, want)
	}
	f.cancel()
	if err := <-f.done; err != nil {
		f.t.Errorf("Follow after cancel: %v", err)
	}
}

// rotate renames the log away as the host does and returns the file the
// runtime still writes to until it reopens.
func rotate(t *testing.T, path string) *os.File {
	t.Helper()
	old, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { old.Close() })
	if err := os.Rename(path, path+".20240501-100000.000000"); err != nil {
		t.Fatal(err)
	}
	return old
}

// TestFollowAcrossRotation follows a log while it is rotated: the runtime
// writes a last line to the renamed file before it reopens, then writes to
// a new file at the same path. Both lines are followed, in order.
func TestFollowAcrossRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	f := startFollow(t, path)
	old := rotate(t, path)
	if _, err := old.Write(entries("while rotating")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, entries("after"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.poll()
	f.stop("before\nwhile rotating\nafter\n")
}

// TestFollowWhileRotatedFileIsMissing keeps following the old file while
// no new file exists yet (between the rename and the reopen).
func TestFollowWhileRotatedFileIsMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	f := startFollow(t, path)
	old := rotate(t, path)
	f.poll()
	if _, err := old.Write(entries("late")); err != nil {
		t.Fatal(err)
	}
	f.poll()
	f.stop("before\nlate\n")
}
