package e2e

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestHostNotifiesSystemd runs the host as systemd runs it, with
// NOTIFY_SOCKET and a 2 s watchdog, and reads what it sends: WATCHDOG=1
// beats with a STATUS= line that counts the running pods.
func TestHostNotifiesSystemd(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	// The host inherits these; containerd, started with it, notifies too
	// but never sends a pod count.
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "2000000")
	t.Setenv("WATCHDOG_PID", "")

	h := startPodHost(t)
	h.apply(busyPod("beating", v1.RestartPolicyAlways, sh("main", `exec sleep 3600`)))
	h.waitPod("beating", 60*time.Second, "running", running)

	var seen []string
	deadline := time.Now().Add(30 * time.Second)
	buf := make([]byte, 4096)
	for {
		if err := conn.SetReadDeadline(deadline); err != nil {
			t.Fatal(err)
		}
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("no beat with 1 running pod within 30s: %v; received %q\n%s", err, seen, h.logTail())
		}
		msg := string(buf[:n])
		seen = append(seen, msg)
		if strings.Contains(msg, "STATUS=1 pod running, 0 pending, 0 finished") && strings.Contains(msg, "WATCHDOG=1") {
			return
		}
	}
}
