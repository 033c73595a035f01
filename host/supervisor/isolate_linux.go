package supervisor

import (
	"os/exec"
	"syscall"
)

// isolate starts the plugin in its own session, so that signals sent to the
// host's process group (Ctrl-C, a service manager stopping the host) do not
// reach plugins directly; the supervisor stops them itself. It also gives
// the plugin a parent-death signal (SIGKILL), so that a host killed with
// SIGKILL takes its plugins with it instead of leaving them running until
// the next host start reaps them. The kernel sends it when the thread that
// forked the plugin ends: launch forks from a thread it keeps for the
// plugin's life (startOnOwnThread).
func isolate(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
