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
// Status, Watchdog and WatchdogInterval speak the rest of the protocol (a
// STATUS= line for `systemctl status`; WATCHDOG=1 as often as the
// WatchdogSec of the unit asks).
//
// Only cmd/host imports this package. It sends READY=1 and STOPPING=1;
// nothing calls Status or Watchdog yet.
package sdnotify
