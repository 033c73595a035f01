package sdnotify

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// listen opens a datagram socket like systemd's and points NOTIFY_SOCKET
// at it. An addr starting with '@' is abstract.
func listen(t *testing.T, addr string) *net.UnixConn {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		t.Fatalf("listening on %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	t.Setenv(EnvSocket, addr)
	return conn
}

func receive(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("receiving: %v", err)
	}
	return string(buf[:n])
}

func TestNotifySends(t *testing.T) {
	ctx := context.Background()
	sockets := []struct{ name, addr string }{
		{"path", filepath.Join(t.TempDir(), "notify.sock")},
		{"abstract", fmt.Sprintf("@podhost-sdnotify-test-%d-%d", os.Getpid(), time.Now().UnixNano())},
	}
	calls := []struct {
		name string
		call func(context.Context) (bool, error)
		want string
	}{
		{"ready", Ready, "READY=1"},
		{"stopping", Stopping, "STOPPING=1"},
		{"raw", func(ctx context.Context) (bool, error) { return Notify(ctx, "READY=1\nSTATUS=up") }, "READY=1\nSTATUS=up"},
	}
	for _, s := range sockets {
		t.Run(s.name, func(t *testing.T) {
			conn := listen(t, s.addr)
			for _, c := range calls {
				sent, err := c.call(ctx)
				if err != nil || !sent {
					t.Fatalf("%s: sent=%t, %v", c.name, sent, err)
				}
				if got := receive(t, conn); got != c.want {
					t.Fatalf("%s: received %q, want %q", c.name, got, c.want)
				}
			}
		})
	}
}

func TestNotifyWithoutSocketIsNoop(t *testing.T) {
	t.Setenv(EnvSocket, "")
	sent, err := Ready(context.Background())
	if sent || err != nil {
		t.Fatalf("sent=%t, %v", sent, err)
	}
}

func TestNotifyErrors(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		socket string
		ctx    context.Context
	}{
		{"nobody listens", filepath.Join(t.TempDir(), "missing.sock"), context.Background()},
		{"relative path", "notify.sock", context.Background()},
		{"cancelled", filepath.Join(t.TempDir(), "x.sock"), cancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvSocket, tt.socket)
			sent, err := Ready(tt.ctx)
			if err == nil || sent {
				t.Fatalf("sent=%t, err=%v; want an error", sent, err)
			}
		})
	}
}

func TestWatchdogInterval(t *testing.T) {
	me := strconv.Itoa(os.Getpid())
	tests := []struct {
		name, usec, pid string
		want            time.Duration
		enabled, err    bool
	}{
		{"unset", "", "", 0, false, false},
		{"for us", "20000000", me, 10 * time.Second, true, false},
		{"no pid", "2000000", "", time.Second, true, false},
		{"other pid", "2000000", "1", 0, false, false},
		{"bad usec", "soon", me, 0, false, true},
		{"zero", "0", me, 0, false, true},
		{"bad pid", "2000000", "me", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvWatchdogUSec, tt.usec)
			t.Setenv(EnvWatchdogPID, tt.pid)
			got, enabled, err := WatchdogInterval()
			if got != tt.want || enabled != tt.enabled || (err != nil) != tt.err {
				t.Fatalf("got %s, %t, %v; want %s, %t, err=%t", got, enabled, err, tt.want, tt.enabled, tt.err)
			}
		})
	}
}
