package state

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	bolt "go.etcd.io/bbolt"

	"github.com/podhost/podhost/internal/testutil"
	"github.com/podhost/podhost/lifecycle"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a test clock that advances by one second on each reading.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second)
	return c.now
}

func openAt(t *testing.T, path string, logs *testutil.SyncBuffer) (*Store, error) {
	t.Helper()
	var out bytes.Buffer
	logger := hclog.New(&hclog.LoggerOptions{Name: "state", Output: &out})
	if logs != nil {
		logger = hclog.New(&hclog.LoggerOptions{Name: "state", Output: logs})
	}
	c := &clock{now: t0}
	return open(path, logger, options{lockTimeout: 200 * time.Millisecond, now: c.Now})
}

func mustOpen(t *testing.T, path string) *Store {
	t.Helper()
	s, err := openAt(t, path, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func running(restarts int32) v1.PodStatus {
	return v1.PodStatus{Phase: v1.PodRunning, Message: "ok", ContainerStatuses: []v1.ContainerStatus{
		{Name: "app", RestartCount: restarts, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
	}}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	s := mustOpen(t, path)
	if s.Recovery() != nil {
		t.Fatalf("fresh database reports a recovery: %+v", s.Recovery())
	}
	if _, err := s.Track(ctx, "default", "web", "uid-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "default", "web", "uid-1", running(2)); err != nil {
		t.Fatal(err)
	}
	pod, err := s.Get(ctx, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if pod.UID != "uid-1" || pod.Namespace != "default" || pod.Name != "web" || pod.Status.Phase != v1.PodRunning ||
		pod.Status.ContainerStatuses[0].RestartCount != 2 {
		t.Fatalf("got %+v", pod)
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "web" || list[0].Terminal || !list[0].Updated.After(t0) {
		t.Fatalf("list: %+v", list)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", info.Mode().Perm())
	}
}

func TestSinkErrors(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, filepath.Join(t.TempDir(), FileName))
	if _, err := s.Track(ctx, "ns", "a", "uid-a"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"get missing", func() error { _, err := s.Get(ctx, "ns", "b"); return err }, lifecycle.ErrNotFound},
		{"put missing", func() error { return s.Put(ctx, "ns", "b", "uid-b", running(0)) }, lifecycle.ErrNotFound},
		{"put other uid", func() error { return s.Put(ctx, "ns", "a", "uid-x", running(0)) }, lifecycle.ErrUIDMismatch},
		{"delete other uid", func() error { return s.Delete(ctx, "ns", "a", "uid-x") }, lifecycle.ErrUIDMismatch},
		{"delete missing", func() error { return s.Delete(ctx, "ns", "b", "uid-b") }, lifecycle.ErrNotFound},
		{"track empty uid", func() error { _, err := s.Track(ctx, "ns", "c", ""); return err }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
	// The failed calls changed nothing.
	pod, err := s.Get(ctx, "ns", "a")
	if err != nil || pod.UID != "uid-a" || pod.Status.Phase != v1.PodPending {
		t.Fatalf("after failed calls: %+v, %v", pod, err)
	}
	if err := s.Delete(ctx, "ns", "a", "uid-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "ns", "a"); !errors.Is(err, lifecycle.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

func TestTrackReplacesAnotherUID(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, filepath.Join(t.TempDir(), FileName))
	for _, step := range []struct {
		uid      types.UID
		replaced bool
	}{{"uid-1", false}, {"uid-1", false}, {"uid-2", true}} {
		got, err := s.Track(ctx, "ns", "p", step.uid)
		if err != nil || got != step.replaced {
			t.Fatalf("Track(%s) = %t, %v; want %t", step.uid, got, err, step.replaced)
		}
	}
	if err := s.Put(ctx, "ns", "p", "uid-1", running(0)); !errors.Is(err, lifecycle.ErrUIDMismatch) {
		t.Fatalf("put for the replaced uid: %v", err)
	}
}

func TestTerminalSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := openAt(t, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Track(ctx, "ns", "job", "uid-j"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "ns", "job", "uid-j", running(3)); err != nil {
		t.Fatal(err)
	}
	failed := v1.PodStatus{Phase: v1.PodFailed, Reason: "Error"}
	if err := s.Put(ctx, "ns", "job", "uid-j", failed); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = mustOpen(t, path)
	rec, err := s.Pod(ctx, "ns", "job")
	if err != nil || !rec.Terminal || rec.Status.Phase != v1.PodFailed || rec.UID != "uid-j" {
		t.Fatalf("after reopen: %+v, %v", rec, err)
	}
	finished, err := s.Finished(ctx)
	if err != nil || finished["uid-j"] != v1.PodFailed || len(finished) != 1 {
		t.Fatalf("finished: %v, %v", finished, err)
	}
	h, ok, err := s.History(ctx, "uid-j")
	if err != nil || !ok || h.RestartCounts["app"] != 3 || h.Namespace != "ns" || h.Name != "job" {
		t.Fatalf("history: %+v %t %v", h, ok, err)
	}
	// A later non-terminal write does not un-finish the UID, and the pod
	// tracked again after a delete comes back terminal.
	if err := s.Put(ctx, "ns", "job", "uid-j", running(0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "ns", "job", "uid-j"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Track(ctx, "ns", "job", "uid-j"); err != nil {
		t.Fatal(err)
	}
	if rec, err := s.Pod(ctx, "ns", "job"); err != nil || rec.Status.Phase != v1.PodFailed || !rec.Terminal {
		t.Fatalf("re-tracked finished pod: %+v, %v", rec, err)
	}
}

func TestForgetHistory(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, filepath.Join(t.TempDir(), FileName))
	for _, uid := range []types.UID{"old", "live"} {
		if _, err := s.Track(ctx, "ns", string(uid), uid); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, "ns", string(uid), uid, v1.PodStatus{Phase: v1.PodSucceeded}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, "ns", "old", "old"); err != nil {
		t.Fatal(err)
	}
	n, err := s.ForgetHistory(ctx, t0.Add(time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("ForgetHistory = %d, %v; want 1", n, err)
	}
	finished, err := s.Finished(ctx)
	if err != nil || len(finished) != 1 || finished["live"] != v1.PodSucceeded {
		t.Fatalf("finished after forget: %v, %v", finished, err)
	}
}

func TestLockedDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	first := mustOpen(t, path)
	start := time.Now()
	_, err := openAt(t, path, nil)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "database is locked by another host?") {
		t.Fatalf("second open: %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("second open took %s", time.Since(start))
	}
	matches, _ := filepath.Glob(path + ".corrupt-*")
	if len(matches) != 0 {
		t.Fatalf("a locked database was moved aside: %v", matches)
	}
	if _, err := first.List(context.Background()); err != nil {
		t.Fatalf("first store broken: %v", err)
	}
}

func TestSchemaTooNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := openAt(t, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, []byte("99")) }); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if _, err := openAt(t, path, nil); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("open newer schema: %v", err)
	}
	matches, _ := filepath.Glob(path + ".corrupt-*")
	if len(matches) != 0 {
		t.Fatalf("a newer database was moved aside: %v", matches)
	}
	// The newer schema is still in the file, untouched.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	_ = db.View(func(tx *bolt.Tx) error { v = string(tx.Bucket(bucketMeta).Get(keySchema)); return nil })
	if v != "99" {
		t.Fatalf("schema is now %q", v)
	}
}

func TestUnusableDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path string }{
		{"parent is a file", filepath.Join(file, "sub", FileName)},
		{"database is a directory", dir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := openAt(t, tt.path, nil); err == nil {
				t.Fatal("opened")
			}
		})
	}
}

func TestTrackAll(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, filepath.Join(t.TempDir(), FileName))
	if _, err := s.Track(ctx, "ns", "a", "uid-a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "ns", "a", "uid-a", running(0)); err != nil {
		t.Fatal(err)
	}
	// a is tracked already (its status stays), b and c are new.
	if err := s.TrackAll(ctx, []PodRef{{"ns", "a", "uid-a"}, {"ns", "b", "uid-b"}, {"ns", "c", "uid-c"}}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]v1.PodPhase{"a": v1.PodRunning, "b": v1.PodPending, "c": v1.PodPending} {
		p, err := s.Get(ctx, "ns", name)
		if err != nil || p.Status.Phase != want || p.UID != types.UID("uid-"+name) {
			t.Errorf("Get(%s) = %v, %v; want uid-%s %s", name, p, err, name, want)
		}
	}
	// One bad ref fails the call, and nothing of it is stored.
	err := s.TrackAll(ctx, []PodRef{{"ns", "d", "uid-d"}, {"ns", "e", ""}})
	if err == nil || !strings.Contains(err.Error(), "ns/e") {
		t.Fatalf("TrackAll with an empty uid: %v; want an error naming ns/e", err)
	}
	if _, err := s.Get(ctx, "ns", "d"); !errors.Is(err, lifecycle.ErrNotFound) {
		t.Errorf("Get(d) after the failed TrackAll: %v; want not found", err)
	}
}
