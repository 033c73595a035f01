package lifecycle

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
)

// minKillTimeout is the shortest wait of KillPodNow.
const minKillTimeout = 10 * time.Second

// PodKiller kills a pod through the pod workers and waits for it
// (KillPodNow): Workers take the kill, Clock times the wait, Recorder
// (may be nil) gets the ExceededGracePeriod event.
type PodKiller struct {
	Workers  PodWorkerSet
	Clock    Clock
	Recorder Recorder
}

// KillPodNow sends a kill for the pod and waits until it is terminated, at
// most max(1.5 × grace, 10s). The grace is override if set, else the spec
// value, else 0 (which the worker raises to 1), as the kubelet's. statusFn,
// if set, adjusts the pod's final status. On timeout it records an
// ExceededGracePeriod event and returns ErrGracePeriodExceeded. Node
// shutdown uses it.
func (k PodKiller) KillPodNow(ctx context.Context, pod *v1.Pod, override *int64, statusFn func(*v1.PodStatus)) error {
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
	k.Workers.UpdatePod(UpdatePodOptions{
		UpdateType: UpdateKill,
		Pod:        pod,
		KillPodOptions: &KillPodOptions{
			CompletedCh: done, PodStatusFunc: statusFn,
			GracePeriodOverride: &grace,
		},
	})
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-k.Clock.After(timeout):
		if k.Recorder != nil {
			k.Recorder.Event(pod, EventWarning, "ExceededGracePeriod", "Container runtime did not kill the pod within specified grace period.")
		}
		return fmt.Errorf("killing pod %s: %w", PodFullName(pod), ErrGracePeriodExceeded)
	}
}
