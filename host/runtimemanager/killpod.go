package runtimemanager

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/lifecycle"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// KillPod stops every container of the pod that has not exited, in
// parallel, each with gracePeriod seconds between the stop signal and the
// kill (the plugin sends SIGTERM, then SIGKILL at the deadline), and then
// stops every sandbox of the pod. It is idempotent. pod may be nil for a
// pod known only to the runtime (running must then be set); a grace period
// below 1 then falls back to the one recorded on the pod's objects, else 1.
//
// The sandboxes are stopped only once every container stopped: stopping a
// sandbox kills its containers at once, which would cut the grace period
// short when a container stop failed or ctx was cancelled (the lifecycle
// cancels ctx when the grace period shrinks and calls again). Before the
// sandboxes, it yields to the other pods' container stops already in
// flight, for at most TeardownYield and never past the grace period
// counted from the call (stopsfirst.go): the yield never makes a kill that
// kept to its grace period outlast it. A forced deletion, whose grace
// period the lifecycle raises to 1 s, yields at most that second.
func (m *Manager) KillPod(ctx context.Context, pod *v1.Pod, running *lifecycle.RunningPod, gracePeriod int64) error {
	start := m.clock.Now()
	var uid, name string
	switch {
	case pod != nil:
		uid, name = string(pod.UID), pod.Namespace+"/"+pod.Name
	case running != nil:
		uid, name = string(running.ID), running.Namespace+"/"+running.Name
	default:
		return errors.New("killing pod: neither pod nor running pod given")
	}
	st, err := m.podState(ctx, podUID(uid))
	if err != nil {
		return fmt.Errorf("killing pod %s: %w", name, err)
	}
	if running != nil {
		addRunning(st, running)
	}
	grace := gracePeriod
	if grace < 1 && pod == nil {
		grace = max(st.grace, 1)
	}
	grace = max(grace, 0)
	m.log.Info("killing pod", "pod", name, "uid", uid, "grace", grace)
	return m.killState(ctx, pod, st, grace, start.Add(time.Duration(grace)*time.Second))
}

// addRunning adds the live containers of running that the listing missed.
func addRunning(st *podState, running *lifecycle.RunningPod) {
	for _, rc := range running.Containers {
		if rc.State == lifecycle.ContainerExited || slices.ContainsFunc(st.containers, func(c containerInfo) bool { return c.id == rc.ID }) {
			continue
		}
		st.containers = append(st.containers, containerInfo{id: rc.ID, name: rc.Name, state: rc.State})
	}
}

// killState stops the live containers of st, then every sandbox: the app
// (and unknown) containers in parallel, then the pod's sidecars one at a
// time in the reverse order of the spec, each with what is left of the
// grace period, as the kubelet terminates them, so that a sidecar serves
// the app containers and the later sidecars (their preStop hooks
// included) until they are gone. pod may be nil; events are then recorded
// on st's names and every container counts as an app container. Until
// yieldUntil, the sandboxes wait for the other pods' stops in flight
// first: a pod that goes away yields, one whose sandbox is made anew
// (yieldUntil zero) does not.
func (m *Manager) killState(ctx context.Context, pod *v1.Pod, st *podState, grace int64, yieldUntil time.Time) error {
	evPod := podOf(pod, st)
	began := m.clock.Now()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		errs     []error
		sidecars = map[string][]containerInfo{}
	)
	stop := func(c containerInfo, grace int64) {
		m.event(evPod, lifecycle.EventNormal, EventKilling, "Stopping container %s", c.name)
		if err := m.stopWithPreStop(ctx, pod, c.name, c.id, podIPOf(st), grace); err != nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("container %q: %w", c.name, err))
			mu.Unlock()
		}
	}
	for _, c := range st.containers {
		if c.state == lifecycle.ContainerExited {
			continue
		}
		if spec := containerSpec(pod, c.name); spec != nil && lifecycle.IsRestartableInitContainer(spec) && isInit(pod, c.name) {
			sidecars[c.name] = append(sidecars[c.name], c)
			continue
		}
		wg.Go(func() { stop(c, grace) })
	}
	wg.Wait()
	if pod != nil {
		for i := len(pod.Spec.InitContainers) - 1; i >= 0 && len(errs) == 0; i-- {
			for _, c := range sidecars[pod.Spec.InitContainers[i].Name] {
				left := grace - int64(m.clock.Now().Sub(began)/time.Second)
				stop(c, max(left, min(grace, 1)))
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if len(st.sandboxes) > 0 {
		if err := m.yieldToStops(ctx, yieldUntil); err != nil {
			return err
		}
	}
	for _, sb := range st.sandboxes {
		if _, err := m.rt.StopSandbox(ctx, &runtimev1.StopSandboxRequest{SandboxId: sb.id}); err != nil {
			errs = append(errs, callError("stopping sandbox "+sb.id, err))
		}
	}
	return errors.Join(errs...)
}

// yieldToStops waits, at most TeardownYield and not past until, for the
// container stops already in flight on the node (stopsfirst.go).
func (m *Manager) yieldToStops(ctx context.Context, until time.Time) error {
	d := min(TeardownYield, until.Sub(m.clock.Now()))
	if d <= 0 {
		return nil
	}
	if err := m.stops.yield(ctx, m.clock.After, d); err != nil {
		return fmt.Errorf("waiting for the node's container stops before the teardown: %w", err)
	}
	return nil
}

// podIPOf is the IP of the pod's newest sandbox, for httpGet hooks.
func podIPOf(st *podState) string {
	if sb := st.newestSandbox(); sb != nil {
		return sb.ip
	}
	return ""
}

// stopContainer stops one container; an unknown one is already stopped.
func (m *Manager) stopContainer(ctx context.Context, id string, grace int64) error {
	defer m.stops.begin()()
	_, err := m.rt.StopContainer(ctx, &runtimev1.StopContainerRequest{ContainerId: id, TimeoutSeconds: grace})
	if err = callError("stopping container "+id, err); errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// isInit reports whether name is one of the pod's init containers.
func isInit(pod *v1.Pod, name string) bool {
	return slices.ContainsFunc(pod.Spec.InitContainers, func(c v1.Container) bool { return c.Name == name })
}
