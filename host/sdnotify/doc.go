// Package sdnotify owns the host's side of the systemd notification
// protocol: datagrams such as "READY=1" sent to the unix socket named by
// $NOTIFY_SOCKET (a path, or an abstract socket when it starts with '@').
//
// Without $NOTIFY_SOCKET (the host run by hand, or by a supervisor other
// than systemd) every call is a no-op that reports sent=false. The unit in
// deploy/podhost.service is Type=notify: systemd considers the host started
// only once it sends READY=1, which it does when its required plugins are
// ready and its pod sources have synced.
//
// Heartbeat keeps the line `systemctl status` shows (STATUS=, how many pods
// run) fresh, and, because the unit sets WatchdogSec, sends WATCHDOG=1 with
// it at least every half of WATCHDOG_USEC: a host that hangs stops beating
// and systemd restarts it.
//
// Only cmd/host imports this package.
package sdnotify
