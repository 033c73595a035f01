package sdnotify

import (
	"context"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Heartbeat keeps systemd informed until ctx is done. Every interval it
// sends STATUS= with the line status returns (what `systemctl status`
// shows), together with WATCHDOG=1 when the unit has a watchdog for this
// process; the interval is then at most half the watchdog timeout.
//
// status runs on Heartbeat's goroutine, so it is the watchdog's test of
// life: a host so stuck that status does not return stops pinging, and
// systemd restarts it. Without $NOTIFY_SOCKET Heartbeat returns at once.
// Failed sends are logged and retried on the next beat.
func Heartbeat(ctx context.Context, interval time.Duration, status func(context.Context) string, log hclog.Logger) {
	if os.Getenv(EnvSocket) == "" {
		return
	}
	wd, watchdog, err := WatchdogInterval()
	if err != nil {
		log.Warn("ignoring systemd's watchdog settings", "err", err)
	}
	if watchdog && (interval <= 0 || wd < interval) {
		interval = wd
	}
	if interval <= 0 {
		return
	}
	for {
		state := "STATUS=" + oneLine(status(ctx))
		if watchdog {
			state += "\n" + StateWatchdog
		}
		if _, err := Notify(ctx, state); err != nil && ctx.Err() == nil {
			log.Warn("notifying systemd", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// oneLine joins the lines of s, as one assignment cannot span lines.
func oneLine(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\n' || c == '\r' {
			b[i] = ' '
		}
	}
	return string(b)
}
