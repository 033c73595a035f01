package prober

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/lifecycle"
)

// maxOutput bounds the output of a probe kept for its event.
const maxOutput = 10 * 1024

// execProbe runs an exec probe: exit 0 is success, any other exit code a
// failure with the command's output, a command cut off by the timeout a
// failure.
func (r *Runner) execProbe(ctx context.Context, id string, cmd []string, timeout time.Duration) (lifecycle.ProbeResult, string, error) {
	if r.exec == nil {
		return lifecycle.ProbeUnknown, "", errors.New("exec probe: no runtime to exec in")
	}
	res, err := r.exec.ExecSync(ctx, id, cmd, timeout)
	switch {
	case errors.Is(err, runtimemanager.ErrExecTimeout), errors.Is(err, context.DeadlineExceeded):
		return lifecycle.ProbeFailure, fmt.Sprintf("command %q timed out", cmd), nil
	case err != nil:
		return lifecycle.ProbeUnknown, "", fmt.Errorf("exec probe: %w", err)
	}
	out := truncate(append(res.Stdout, res.Stderr...))
	if res.ExitCode != 0 {
		if out == "" {
			out = fmt.Sprintf("command %q exited with %d", cmd, res.ExitCode)
		}
		return lifecycle.ProbeFailure, out, nil
	}
	return lifecycle.ProbeSuccess, out, nil
}

func truncate(b []byte) string {
	if len(b) > maxOutput {
		b = b[:maxOutput]
	}
	return string(b)
}
