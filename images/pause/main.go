// Command pause is the process that holds a pod sandbox open: it blocks until
// SIGTERM or SIGINT, exits 0 on either, and reaps zombie children on SIGCHLD
// so that processes re-parented to it (it is PID 1 of a shared PID namespace)
// never pile up. It must build with CGO_ENABLED=0 into a static binary; it is
// the /pause entrypoint of the podhost.local/pause image (images/localimages).
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("podhost pause")
		return
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	os.Exit(wait(signals))
}

// wait reaps children on every SIGCHLD and returns the exit status, 0, on
// the first other signal.
func wait(signals <-chan os.Signal) int {
	for sig := range signals {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		return 0
	}
	return 0
}

// reap collects every child that has exited; SIGCHLD coalesces, so one signal
// may stand for many exits.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
