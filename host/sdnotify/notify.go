package sdnotify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

// Environment variables systemd sets for a notify service.
const (
	EnvSocket       = "NOTIFY_SOCKET"
	EnvWatchdogUSec = "WATCHDOG_USEC"
	EnvWatchdogPID  = "WATCHDOG_PID"
)

// States the host sends.
const (
	StateReady    = "READY=1"
	StateStopping = "STOPPING=1"
	StateWatchdog = "WATCHDOG=1"
)

// sendTimeout bounds a send when ctx has no deadline: the socket is local
// and systemd reads it promptly, a full queue must not hang the host.
const sendTimeout = 5 * time.Second

// Notify sends state (one or more newline-separated VAR=value assignments)
// to $NOTIFY_SOCKET. With no socket set it does nothing and returns
// sent=false, nil.
func Notify(ctx context.Context, state string) (sent bool, err error) {
	addr := os.Getenv(EnvSocket)
	if addr == "" {
		return false, nil
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("notifying systemd: %w", err)
	}
	if addr[0] != '/' && addr[0] != '@' {
		return false, fmt.Errorf("notifying systemd: %s=%q is neither a path nor an abstract socket", EnvSocket, addr)
	}
	// Go maps a leading '@' to the abstract namespace on Linux.
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return false, fmt.Errorf("notifying systemd on %s: %w", addr, err)
	}
	defer conn.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(sendTimeout)
	}
	if err := conn.SetWriteDeadline(deadline); err != nil {
		return false, fmt.Errorf("notifying systemd on %s: %w", addr, err)
	}
	if _, err := conn.Write([]byte(state)); err != nil {
		return false, fmt.Errorf("notifying systemd on %s: %w", addr, err)
	}
	return true, nil
}

// Ready tells systemd the host is up: required plugins ready, sources
// synced.
func Ready(ctx context.Context) (bool, error) { return Notify(ctx, StateReady) }

// Stopping tells systemd the host is shutting down.
func Stopping(ctx context.Context) (bool, error) { return Notify(ctx, StateStopping) }

// WatchdogInterval reports how often Watchdog should be called: half the
// WATCHDOG_USEC systemd set, when it set one for this process. enabled is
// false when the unit has no watchdog or it is meant for another PID.
func WatchdogInterval() (interval time.Duration, enabled bool, err error) {
	usec := os.Getenv(EnvWatchdogUSec)
	if usec == "" {
		return 0, false, nil
	}
	if pid := os.Getenv(EnvWatchdogPID); pid != "" {
		p, err := strconv.Atoi(pid)
		if err != nil {
			return 0, false, fmt.Errorf("parsing %s=%q: %w", EnvWatchdogPID, pid, err)
		}
		if p != os.Getpid() {
			return 0, false, nil
		}
	}
	n, err := strconv.ParseInt(usec, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("parsing %s=%q: %w", EnvWatchdogUSec, usec, err)
	}
	if n <= 0 {
		return 0, false, errors.New("parsing " + EnvWatchdogUSec + ": must be positive")
	}
	return time.Duration(n) * time.Microsecond / 2, true, nil
}
