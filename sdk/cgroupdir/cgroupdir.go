// Package cgroupdir removes cgroup directories as the kernel allows it: a
// cgroup whose last process was killed but not yet reaped (a zombie until
// its parent waits for it) refuses rmdir with EBUSY for a while, so EBUSY
// is retried until a deadline. It is part of the plugin authors' library
// for runtime plugins that make cgroups of their own: plugins/runtime-containerd
// imports it for its pod cgroups, and test/crisetup for the cgroups of a
// killed containerd's tasks.
package cgroupdir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// retryEvery is the pause between two tries of a busy cgroup.
const retryEvery = 100 * time.Millisecond

// Remove removes every dir (an empty cgroup: rmdir, nothing recursive),
// retrying those the kernel finds busy for up to busyWait or until ctx
// ends. A dir that does not exist is removed already. The error joins
// each dir's last one.
func Remove(ctx context.Context, dirs []string, busyWait time.Duration) error {
	deadline := time.Now().Add(busyWait)
	for {
		var busy []string
		var errs []error
		for _, dir := range dirs {
			err := os.Remove(dir)
			switch {
			case err == nil, errors.Is(err, os.ErrNotExist):
				continue
			case errors.Is(err, syscall.EBUSY):
				busy = append(busy, dir)
			}
			errs = append(errs, fmt.Errorf("remove cgroup: %w", err))
		}
		if len(busy) == 0 || time.Now().After(deadline) {
			return errors.Join(errs...)
		}
		dirs = busy
		select {
		case <-ctx.Done():
			return errors.Join(append(errs, ctx.Err())...)
		case <-time.After(retryEvery):
		}
	}
}
