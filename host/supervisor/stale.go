package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"
)

// Plugin processes run in their own session so that signals to the host do
// not reach them. On Linux a plugin ends with its host all the same (a
// parent-death signal, see isolate_linux.go); where that signal is missing
// or was lost, a killed host would leave its plugins running. As a backstop
// each launch records the plugin's PID in SocketDir, and the next launch of
// the same plugin (in this host or the next one) kills a process still
// running under that PID from the same executable.

// pidFile is where the PID of a plugin's current process is recorded.
func pidFile(socketDir, plugin string) string {
	return filepath.Join(socketDir, plugin+".pid")
}

// recordPID writes the PID of a launched plugin process.
func recordPID(socketDir, plugin string, pid int) error {
	if socketDir == "" || pid <= 0 {
		return nil
	}
	return os.WriteFile(pidFile(socketDir, plugin), []byte(strconv.Itoa(pid)+"\n"), 0o600)
}

// reapStale kills the process recorded for plugin if it still runs the
// plugin's executable, and forgets the record. It reports the PID it
// killed, 0 if none.
func reapStale(socketDir, plugin, path string, log hclog.Logger) int {
	if socketDir == "" {
		return 0
	}
	file := pidFile(socketDir, plugin)
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	defer os.Remove(file)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		log.Warn("ignoring unreadable plugin pid file", "plugin", plugin, "file", file)
		return 0
	}
	if !runsExecutable(pid, path) {
		return 0
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		log.Warn("killing plugin process left by a previous host", "plugin", plugin, "pid", pid, "err", err)
		return 0
	}
	log.Warn("killed plugin process left by a previous host", "plugin", plugin, "pid", pid)
	return pid
}

// runsExecutable reports whether process pid runs the executable at path.
func runsExecutable(pid int, path string) bool {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return false
	}
	want, err := filepath.EvalSymlinks(path)
	if err != nil {
		want = path
	}
	// A replaced binary shows as "<path> (deleted)".
	return strings.TrimSuffix(exe, " (deleted)") == want
}
