package runtimemanager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func podUID(s string) types.UID { return types.UID(s) }

// RemovePod removes every container and sandbox of a pod, its log
// directory, its termination message files and its back-off state. It refuses (ErrPodRunning) while a
// container of the pod has not exited or a sandbox is ready: it removes
// only what KillPod stopped. It is idempotent; a pod the runtime does not
// hold succeeds.
//
// Containers are left after termination so that their logs and exit codes
// stay readable; the host removes them in the background: either through
// GarbageCollect on a period, or by calling RemovePod for a pod after its
// SyncTerminatedPod returned nil and the pod's status was written (from a
// goroutine, not the pod worker: the worker must not wait for it).
//
// A pod re-added with the same UID (a static pod) may sync meanwhile:
// RemovePod and SyncPod of one UID never overlap, so the removal either
// ends before the new incarnation creates anything, or finds its ready
// sandbox and refuses; it never takes the new incarnation's log directory
// or back-off.
func (m *Manager) RemovePod(ctx context.Context, uid types.UID) error {
	unlock, err := m.locks.lock(ctx, uid)
	if err != nil {
		return fmt.Errorf("removing pod %s: %w", uid, err)
	}
	defer unlock()
	st, err := m.podState(ctx, uid)
	if err != nil {
		return fmt.Errorf("removing pod %s: %w", uid, err)
	}
	return m.removeState(ctx, st)
}

func (m *Manager) removeState(ctx context.Context, st *podState) error {
	if st.hasRunning() {
		return fmt.Errorf("removing pod %s/%s (%s): %w", st.namespace, st.name, st.uid, ErrPodRunning)
	}
	if len(st.containers)+len(st.sandboxes) > 0 {
		if err := m.yieldToStops(ctx, m.clock.Now().Add(TeardownYield)); err != nil {
			return fmt.Errorf("removing pod %s/%s (%s): %w", st.namespace, st.name, st.uid, err)
		}
	}
	var errs []error
	for _, c := range st.containers {
		if _, err := m.rt.RemoveContainer(ctx, &runtimev1.RemoveContainerRequest{ContainerId: c.id}); err != nil {
			errs = append(errs, callError("removing container "+c.id, err))
			continue
		}
		m.resized.forget(c.id)
	}
	for _, sb := range st.sandboxes {
		if _, err := m.rt.RemoveSandbox(ctx, &runtimev1.RemoveSandboxRequest{SandboxId: sb.id}); err != nil {
			errs = append(errs, callError("removing sandbox "+sb.id, err))
			continue
		}
		m.resized.forget(sb.id)
	}
	if len(errs) > 0 {
		return fmt.Errorf("removing pod %s/%s (%s): %w", st.namespace, st.name, st.uid, errors.Join(errs...))
	}
	if st.name != "" {
		if err := os.RemoveAll(PodLogDir(m.logRoot, st.namespace, st.name, st.uid)); err != nil {
			return fmt.Errorf("removing logs of %s/%s: %w", st.namespace, st.name, err)
		}
	}
	if err := m.removePodFiles(st.uid); err != nil {
		return fmt.Errorf("removing pod %s/%s (%s): %w", st.namespace, st.name, st.uid, err)
	}
	m.backoff.forget(st.uid)
	m.cutStarts.forget(st.uid)
	m.details.forget(st.uid)
	m.log.Info("removed pod", "pod", st.namespace+"/"+st.name, "uid", string(st.uid))
	return nil
}

// GarbageCollect removes what pods left behind in the runtime. For each pod
// the runtime holds:
//   - when removable(uid) is true and nothing of the pod runs, everything
//     (RemovePod);
//   - otherwise the exited containers that are neither the newest of their
//     name nor the newest exited one (with their log and termination
//     message files), and the
//     non-ready sandboxes older than the newest one that hold no
//     container any more.
//
// removable must be true only for pods whose worker has finished
// (SyncTerminatedPod returned nil) or which the pod workers do not know
// after their first SyncKnownPods; the host passes a function over its
// pod workers and calls GarbageCollect every minute from one goroutine.
// Errors of single pods do not stop the others; they are joined.
func (m *Manager) GarbageCollect(ctx context.Context, removable func(types.UID) bool) error {
	states, err := m.list(ctx, managedSelector())
	if err != nil {
		return fmt.Errorf("garbage collection: %w", err)
	}
	var errs []error
	for uid, st := range states {
		if ctx.Err() != nil {
			break
		}
		unlock, ok := m.locks.tryLock(uid)
		if !ok {
			continue // being synced or removed: the next collection sees it
		}
		if removable(uid) && !st.hasRunning() {
			// Read it again under the lock: a new incarnation of the UID
			// may have synced since the listing.
			if st, err = m.podState(ctx, uid); err == nil {
				err = m.removeState(ctx, st)
			}
			errs = append(errs, err)
		} else {
			errs = append(errs, m.prune(ctx, st))
		}
		unlock()
	}
	return errors.Join(errs...)
}

// prune removes the dead containers of a live pod but the newest of their
// name and the newest dead one (whose log `podhost logs --previous` reads),
// and its empty dead older sandboxes.
func (m *Manager) prune(ctx context.Context, st *podState) error {
	var errs []error
	seen := map[string]bool{}
	seenDead := map[string]bool{}
	kept := map[string]bool{}
	for _, c := range st.containers {
		dead := c.state == lifecycle.ContainerExited
		if !seen[c.name] || !dead || !seenDead[c.name] {
			seen[c.name] = true
			seenDead[c.name] = seenDead[c.name] || dead
			kept[c.sandboxID] = true
			continue
		}
		if _, err := m.rt.RemoveContainer(ctx, &runtimev1.RemoveContainerRequest{ContainerId: c.id}); err != nil {
			errs = append(errs, callError("removing container "+c.id, err))
			kept[c.sandboxID] = true
			continue
		}
		m.resized.forget(c.id)
		if st.name != "" {
			path := filepath.Join(PodLogDir(m.logRoot, st.namespace, st.name, st.uid), ContainerLogPath(c.name, c.restartCount))
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			if err := removeRotatedLogs(path); err != nil {
				errs = append(errs, err)
			}
		}
		if err := m.removeTerminationMessage(st.uid, c.name, c.restartCount); err != nil {
			errs = append(errs, err)
		}
	}
	for i, sb := range st.sandboxes {
		if i == 0 || sb.ready || kept[sb.id] {
			continue
		}
		if _, err := m.rt.RemoveSandbox(ctx, &runtimev1.RemoveSandboxRequest{SandboxId: sb.id}); err != nil {
			errs = append(errs, callError("removing sandbox "+sb.id, err))
			continue
		}
		m.resized.forget(sb.id)
	}
	return errors.Join(errs...)
}
