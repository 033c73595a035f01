package runtimemanager

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// reopening answers ReopenContainerLog as a runtime does: it makes a new
// file at the container's log path. The fake runtime has no such call.
type reopening struct {
	runtimev1.RuntimeClient
	mu    sync.Mutex
	calls []string
}

func (r *reopening) ReopenContainerLog(ctx context.Context, req *runtimev1.ReopenContainerLogRequest, opts ...grpc.CallOption) (*runtimev1.ReopenContainerLogResponse, error) {
	r.mu.Lock()
	r.calls = append(r.calls, req.GetContainerId())
	r.mu.Unlock()
	st, err := r.ContainerStatus(ctx, &runtimev1.ContainerStatusRequest{ContainerId: req.GetContainerId()}, opts...)
	if err != nil {
		return nil, err
	}
	return &runtimev1.ReopenContainerLogResponse{}, os.WriteFile(st.GetContainer().GetLogPath(), nil, 0o640)
}

func (r *reopening) reopened() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// logOf writes body as the log of the container id and returns its path.
func (e *env) logOf(id string, body string) string {
	e.t.Helper()
	resp, err := e.client.ContainerStatus(context.Background(), &runtimev1.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		e.t.Fatal(err)
	}
	path := resp.GetContainer().GetLogPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o640); err != nil {
		e.t.Fatal(err)
	}
	return path
}

func TestRotateContainerLogs(t *testing.T) {
	e := newEnv(t)
	rt := &reopening{RuntimeClient: e.client}
	e.m.rt = rt
	web := newPod("web", "app", "side")
	done := newPod("done", "job")
	e.mustSync(web)
	e.mustSync(done)
	e.exit(done, "job", 0)

	big := strings.Repeat("x", 100)
	app := e.container(web, "app").ID
	appLog := e.logOf(app, big)
	sideLog := e.logOf(e.container(web, "side").ID, "small")
	jobLog := e.logOf(e.container(done, "job").ID, big)

	policy := LogRotation{MaxBytes: 50, MaxFiles: 3, Interval: time.Second}
	if err := e.m.RotateContainerLogs(context.Background(), policy); err != nil {
		t.Fatalf("RotateContainerLogs: %v", err)
	}
	if got := rt.reopened(); !slices.Equal(got, []string{app}) {
		t.Errorf("reopened: got %q; want only the running container with a big log, %q", got, app)
	}
	tests := []struct {
		path string
		want []string
	}{
		{appLog, []string{"", "." + epoch.Format(rotatedTimeFormat)}},
		{sideLog, []string{""}},
		{jobLog, []string{""}},
	}
	for _, tt := range tests {
		if got := logSuffixes(t, filepath.Dir(tt.path), filepath.Base(tt.path)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got files %q; want %q", tt.path, got, tt.want)
		}
	}
	if b, err := os.ReadFile(appLog); err != nil || len(b) != 0 {
		t.Errorf("new log of app: got %q, %v; want an empty file", b, err)
	}
}

func TestRotateLogsLoop(t *testing.T) {
	e := newEnv(t)
	rt := &reopening{RuntimeClient: e.client}
	e.m.rt = rt
	web := newPod("web", "app")
	e.mustSync(web)
	appLog := e.logOf(e.container(web, "app").ID, strings.Repeat("x", 100))

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		e.m.RotateLogs(ctx, LogRotation{MaxBytes: 50, MaxFiles: 2, Interval: time.Minute})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(rt.reopened()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no rotation after stepping the clock; files %q", logSuffixes(t, filepath.Dir(appLog), filepath.Base(appLog)))
		}
		e.clock.Step(time.Minute)
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-stopped
}

func TestRotateLogsRefusesBadPolicy(t *testing.T) {
	e := newEnv(t)
	for _, p := range []LogRotation{
		{MaxBytes: 0, MaxFiles: 5, Interval: time.Second},
		{MaxBytes: 10, MaxFiles: 1, Interval: time.Second},
		{MaxBytes: 10, MaxFiles: 5},
	} {
		e.m.RotateLogs(context.Background(), p) // returns at once
		if err := e.m.RotateContainerLogs(context.Background(), p); err == nil {
			t.Errorf("RotateContainerLogs(%+v): got no error; want the policy refused", p)
		}
	}
}

// TestRotateWithoutReopen runs against a runtime plugin without
// ReopenContainerLog (the fake has none): the log keeps its name and the
// pass says why.
func TestRotateWithoutReopen(t *testing.T) {
	e := newEnv(t)
	rt := &countingReopen{RuntimeClient: e.client}
	e.m.rt = rt
	web := newPod("web", "app", "side")
	e.mustSync(web)
	appLog := e.logOf(e.container(web, "app").ID, strings.Repeat("x", 100))
	e.logOf(e.container(web, "side").ID, strings.Repeat("x", 100))
	err := e.m.RotateContainerLogs(context.Background(), LogRotation{MaxBytes: 50, MaxFiles: 3, Interval: time.Second})
	if !errors.Is(err, ErrReopenUnsupported) {
		t.Fatalf("RotateContainerLogs: got %v; want ErrReopenUnsupported", err)
	}
	if got := logSuffixes(t, filepath.Dir(appLog), filepath.Base(appLog)); !slices.Equal(got, []string{""}) {
		t.Errorf("files: got %q; want the log under its name", got)
	}
	if n := rt.calls.Load(); n != 1 {
		t.Errorf("ReopenContainerLog called %d times; want one: the pass stops after it", n)
	}
}

// countingReopen counts the ReopenContainerLog calls it passes on.
type countingReopen struct {
	runtimev1.RuntimeClient
	calls atomic.Int32
}

func (c *countingReopen) ReopenContainerLog(ctx context.Context, req *runtimev1.ReopenContainerLogRequest, opts ...grpc.CallOption) (*runtimev1.ReopenContainerLogResponse, error) {
	c.calls.Add(1)
	return c.RuntimeClient.ReopenContainerLog(ctx, req, opts...)
}

// TestRotateAtRestCallsLittle counts the runtime calls of several rotation
// passes over pods whose logs need no rotation: the host knows the paths
// it gave the containers, so a pass only reads the log directory.
func TestRotateAtRestCallsLittle(t *testing.T) {
	policy := LogRotation{MaxBytes: 50, MaxFiles: 3, Interval: time.Second}
	const passes = 5
	tests := []struct {
		name      string
		bigExited bool // an exited container has a log over the limit
		want      int  // runtime calls over all passes
	}{
		{name: "small logs", want: 0},
		{name: "big log of an exited container", bigExited: true, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			rt := &reopening{RuntimeClient: e.client}
			e.m.rt = rt
			for _, name := range []string{"a", "b", "c"} {
				p := newPod(name, "app", "side")
				e.mustSync(p)
				e.logOf(e.container(p, "app").ID, "small")
				e.logOf(e.container(p, "side").ID, "small")
			}
			if tt.bigExited {
				done := newPod("done", "job")
				e.mustSync(done)
				e.exit(done, "job", 0)
				e.logOf(e.container(done, "job").ID, strings.Repeat("x", 100))
			}
			before := len(e.fake.Calls())
			for range passes {
				if err := e.m.RotateContainerLogs(context.Background(), policy); err != nil {
					t.Fatalf("RotateContainerLogs: %v", err)
				}
			}
			var calls []string
			for _, c := range e.fake.Calls()[before:] {
				calls = append(calls, c.Method)
			}
			if len(calls) != tt.want {
				t.Errorf("%d passes made %d runtime calls %q; want %d", passes, len(calls), calls, tt.want)
			}
			if got := rt.reopened(); len(got) != 0 {
				t.Errorf("reopened %q; want none", got)
			}
		})
	}
}
