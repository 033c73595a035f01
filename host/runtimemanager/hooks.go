package runtimemanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
)

// HookRunner runs one lifecycle hook of a container and waits for it
// within ctx; the host passes the prober's Runner.
type HookRunner interface {
	RunHook(ctx context.Context, pod *v1.Pod, c *v1.Container, containerID, podIP string, h *v1.LifecycleHandler) error
}

// The kubelet's events and waiting reason of failed hooks.
const (
	EventFailedPostStartHook = "FailedPostStartHook"
	EventFailedPreStopHook   = "FailedPreStopHook"
	ReasonPostStartHookError = "PostStartHookError"
)

// ErrPostStartHook is a container killed because its postStart hook
// failed.
var ErrPostStartHook = errors.New("postStart hook failed")

// postStart runs the container's postStart hook right after its start. A
// failed hook kills the container (its preStop runs first, within the
// pod's grace period); what follows is the restart policy's.
func (m *Manager) postStart(ctx context.Context, pod *v1.Pod, spec *v1.Container, id, podIP string) error {
	if m.opts.Hooks == nil || spec.Lifecycle == nil || spec.Lifecycle.PostStart == nil {
		return nil
	}
	err := m.opts.Hooks.RunHook(ctx, pod, spec, id, podIP, spec.Lifecycle.PostStart)
	if err == nil {
		return nil
	}
	msg := fmt.Sprintf("PostStartHook of container %s failed: %v", spec.Name, err)
	m.event(pod, lifecycle.EventWarning, EventFailedPostStartHook, "%s", msg)
	m.setReason(pod, spec.Name, ReasonPostStartHookError, msg)
	if kerr := m.stopWithPreStop(ctx, pod, spec.Name, id, podIP, podGracePeriod(pod)); kerr != nil {
		return fmt.Errorf("container %q: %w: %w (and killing it: %w)", spec.Name, ErrPostStartHook, err, kerr)
	}
	return fmt.Errorf("container %q: %w: %w", spec.Name, ErrPostStartHook, err)
}

// stopWithPreStop stops a container within grace seconds. Its preStop
// hook, if any, runs first and inside the grace period: the stop signal
// follows once the hook returned, with what is left of the grace period,
// and a hook that outlives the grace period is cut off and the container
// is killed at the deadline.
func (m *Manager) stopWithPreStop(ctx context.Context, pod *v1.Pod, name, id, podIP string, grace int64) error {
	spec := containerSpec(pod, name)
	if m.opts.Hooks == nil || spec == nil || spec.Lifecycle == nil || spec.Lifecycle.PreStop == nil || grace <= 0 {
		return m.stopContainer(ctx, id, grace)
	}
	began := m.clock.Now()
	hctx, cancel := context.WithTimeout(ctx, time.Duration(grace)*time.Second)
	err := m.opts.Hooks.RunHook(hctx, pod, spec, id, podIP, spec.Lifecycle.PreStop)
	cutOff := errors.Is(hctx.Err(), context.DeadlineExceeded)
	cancel()
	if err != nil && ctx.Err() == nil {
		m.event(pod, lifecycle.EventWarning, EventFailedPreStopHook, "PreStopHook of container %s failed: %v", name, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("container %q: preStop hook: %w", name, err)
	}
	left := grace - int64(m.clock.Now().Sub(began).Round(time.Second)/time.Second)
	if cutOff {
		left = 0
	}
	return m.stopContainer(ctx, id, max(left, 0))
}

// containerSpec returns the container named name of the pod (nil pod or
// none: nil).
func containerSpec(pod *v1.Pod, name string) *v1.Container {
	if pod == nil {
		return nil
	}
	for _, list := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}
