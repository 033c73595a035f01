package lifecycle

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
)

// minKillTimeout is the shortest wait of KillPodNow.
const minKillTimeout = 10 * time.Second

// KillPodNow sends a kill for the pod and waits until it is terminated, at
// most max(1.5 × grace, 10s). The grace is override if set, else the spec
// value, else 0 (which the worker raises to 1). On timeout it records an
// ExceededGracePeriod event and returns ErrGracePeriodExceeded. Eviction
// and node shutdown use it.
func KillPodNow(ctx context.Context, w PodWorkerSet, clock Clock, recorder Recorder, pod *v1.Pod, evict bool, override *int64, statusFn func(*v1.PodStatus)) error {
	var grace int64
	switch {
	case override != nil:
		grace = *override
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	timeout := time.Duration(grace)*time.Second + time.Duration(grace)*time.Second/2
	timeout = max(timeout, minKillTimeout)
	done := make(chan struct{})
	w.UpdatePod(UpdatePodOptions{
		UpdateType: UpdateKill,
		Pod:        pod,
		KillPodOptions: &KillPodOptions{
			CompletedCh: done, Evict: evict, PodStatusFunc: statusFn,
			GracePeriodOverride: &grace,
		},
	})
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-clock.After(timeout):
		if recorder != nil {
			recorder.Event(pod, EventWarning, "ExceededGracePeriod", "Container runtime did not kill the pod within specified grace period.")
		}
		return fmt.Errorf("killing pod %s: %w", PodFullName(pod), ErrGracePeriodExceeded)
	}
}
