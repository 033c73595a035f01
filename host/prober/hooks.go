package prober

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	v1 "k8s.io/api/core/v1"
)

// ErrHookFailed is a lifecycle hook that ran and failed.
var ErrHookFailed = errors.New("lifecycle hook failed")

// RunHook runs a postStart or preStop hook of a container and waits for
// it within ctx, which carries the hook's deadline (the grace period for
// preStop). exec fails on a non-zero exit code, httpGet on no answer,
// sleep returns early only when ctx ends. The error wraps ErrHookFailed
// with the hook's output when the hook ran and failed.
func (r *Runner) RunHook(ctx context.Context, pod *v1.Pod, c *v1.Container, containerID, podIP string, h *v1.LifecycleHandler) error {
	switch {
	case h.Exec != nil:
		if r.exec == nil {
			return errors.New("exec hook: no runtime to exec in")
		}
		res, err := r.exec.ExecSync(ctx, containerID, h.Exec.Command, 0)
		if err != nil {
			return fmt.Errorf("exec hook %q: %w", h.Exec.Command, err)
		}
		if res.ExitCode != 0 {
			return fmt.Errorf("%w: command %q exited with %d: %s", ErrHookFailed, h.Exec.Command, res.ExitCode, truncate(append(res.Stdout, res.Stderr...)))
		}
		return nil
	case h.HTTPGet != nil:
		host, port, err := address(pod, c, podIP, h.HTTPGet.Host, h.HTTPGet.Port)
		if err != nil {
			return fmt.Errorf("httpGet hook: %w", err)
		}
		req, err := httpRequest(ctx, h.HTTPGet, host, port, r.userAgent)
		if err != nil {
			return fmt.Errorf("httpGet hook: %w", err)
		}
		resp, err := r.http.client.Do(req)
		if err != nil {
			return fmt.Errorf("%w: httpGet %s: %w", ErrHookFailed, req.URL, err)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxOutput))
		resp.Body.Close()
		return nil
	case h.Sleep != nil:
		t := time.NewTimer(time.Duration(h.Sleep.Seconds) * time.Second)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("sleep hook of %d s: %w", h.Sleep.Seconds, ctx.Err())
		}
	}
	return fmt.Errorf("hook of container %q: %w", c.Name, errNoHandler)
}
