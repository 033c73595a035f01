package supervisor

import (
	"os/exec"
	"syscall"
)

// isolate starts the plugin in its own session, so that signals sent to the
// host's process group (Ctrl-C, a service manager stopping the host) do not
// reach plugins directly; the supervisor stops them itself.
func isolate(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
}
