package sdnotify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

func TestHeartbeat(t *testing.T) {
	me := strconv.Itoa(os.Getpid())
	tests := []struct {
		name      string
		usec, pid string
		interval  time.Duration
		want      string
	}{
		{"status only", "", "", 20 * time.Millisecond, "STATUS=2 pods running, 1 pending"},
		{"status and watchdog", "100000", me, time.Hour, "STATUS=2 pods running, 1 pending\nWATCHDOG=1"},
		{"watchdog of another process", "100000", "1", 20 * time.Millisecond, "STATUS=2 pods running, 1 pending"},
		{"watchdog without a status interval", "100000", "", 0, "STATUS=2 pods running, 1 pending\nWATCHDOG=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := listen(t, filepath.Join(t.TempDir(), "notify.sock"))
			t.Setenv(EnvWatchdogUSec, tt.usec)
			t.Setenv(EnvWatchdogPID, tt.pid)
			var calls atomic.Int32
			status := func(context.Context) string {
				calls.Add(1)
				return "2 pods running,\n1 pending"
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				Heartbeat(ctx, tt.interval, status, hclog.NewNullLogger())
			}()
			// Beats repeat: the second one comes after an interval, which
			// the watchdog shortened to 50ms where it is on.
			for i := range 2 {
				if got := receive(t, conn); got != tt.want {
					t.Fatalf("beat %d: received %q; want %q", i, got, tt.want)
				}
			}
			cancel()
			<-done
			if calls.Load() < 2 {
				t.Errorf("status called %d times; want once per beat", calls.Load())
			}
		})
	}
}

func TestHeartbeatWithoutSocketReturns(t *testing.T) {
	t.Setenv(EnvSocket, "")
	called := false
	Heartbeat(context.Background(), time.Millisecond, func(context.Context) string { called = true; return "" }, hclog.NewNullLogger())
	if called {
		t.Error("status was asked for with no systemd to tell")
	}
}

func TestHeartbeatKeepsBeatingAfterAFailedSend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify.sock")
	t.Setenv(EnvSocket, path) // nobody listens yet
	t.Setenv(EnvWatchdogUSec, "")
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Heartbeat(ctx, 10*time.Millisecond, func(context.Context) string {
		return fmt.Sprintf("beat %d", calls.Add(1))
	}, hclog.NewNullLogger())
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no second beat after a failed send")
		}
		time.Sleep(time.Millisecond)
	}
	conn := listen(t, path)
	if got := receive(t, conn); len(got) < len("STATUS=beat ") || got[:len("STATUS=beat ")] != "STATUS=beat " {
		t.Errorf("received %q; want a later beat", got)
	}
}
