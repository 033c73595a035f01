package main

import (
	"context"
	"fmt"
	"time"
)

// containerd publishes a task's exit (/tasks/exit, with the exit status and
// time) as soon as the shim reaps the init process; CRI shows the exit only
// after it has deleted the task, tens of milliseconds later, more under
// load. So that an exit reaches the host without that lag, the watcher
// reports a container's own exit from the event itself: the snapshot marks
// it EXITED and publishes the event at once, and ContainerStatus answers
// with the exit code, time and reason the event gave (exitFact) until CRI
// shows the exit itself; CRI's answer then wins. The reason is the one CRI
// gives: OOMKilled after a /tasks/oom of the container, else Completed for
// status 0 and Error for any other. An exit the plugin causes itself (its
// StopContainer, StopSandbox or RemoveContainer in flight) is still
// reported by that call, once CRI has it.

// exitFact is what containerd's exit event told of a container's end.
type exitFact struct {
	code int32
	at   int64 // Unix nanoseconds
	oom  bool
}

// CRI's reasons for an exited container.
const (
	reasonCompleted = "Completed"
	reasonError     = "Error"
	reasonOOMKilled = "OOMKilled"
)

func (f exitFact) reason() string {
	switch {
	case f.oom:
		return reasonOOMKilled
	case f.code == 0:
		return reasonCompleted
	}
	return reasonError
}

// exitFirst records the exit ev tells of and publishes it, when ev is the
// exit of a container the snapshot knows as running and no call of the
// plugin will report it; it reports whether it did. Only a running one: a
// task that exits while its container is still created is a start that
// failed or was cut short, which CRI reports as its own exit (128,
// StartError) once it has cleaned up, so that exit waits for CRI. The
// caller holds w.mu.
func (w *watcher) exitFirst(run *watchRun, ev taskEvent) bool {
	c, ok := run.last.containers[ev.id]
	if ev.exit == nil || !ok || c.state != ContainerRunning || w.waitsForCall(run, ev) {
		return false
	}
	f := *ev.exit
	f.oom = run.ooms[ev.id]
	if run.exits == nil {
		run.exits = map[string]exitFact{}
	}
	run.exits[ev.id] = f
	events := run.last.apply(change{kind: containerExited, containerID: ev.id}, w.now().UnixNano())
	w.touch(run, events)
	w.publish(events)
	return true
}

// noteOOM records an OOM kill in a container, for the reason of its exit.
// The caller holds w.mu.
func (w *watcher) noteOOM(run *watchRun, id string) {
	if run.ooms == nil {
		run.ooms = map[string]bool{}
	}
	run.ooms[id] = true
}

// withExit is c as the plugin reports it: when CRI does not show yet the
// exit the watcher reported from containerd's event, c carries that exit;
// once CRI shows it, the fact is forgotten and CRI's answer stands.
func (w *watcher) withExit(c Container) Container {
	w.mu.Lock()
	defer w.mu.Unlock()
	run := w.run
	if run == nil {
		return c
	}
	f, ok := run.exits[c.ID]
	switch {
	case !ok:
	case c.State == ContainerExited:
		delete(run.exits, c.ID)
		delete(run.ooms, c.ID)
	default:
		c.State, c.ExitCode, c.FinishedAt, c.Reason, c.Message = ContainerExited, f.code, f.at, f.reason(), ""
	}
	return c
}

// keepExits makes a listing of CRI keep the exits reported from events
// that CRI does not show yet, and forgets those it shows or whose
// container is gone, with their OOM marks. The caller holds w.mu.
func (run *watchRun) keepExits(cur snapshot) {
	for id := range run.exits {
		c, ok := cur.containers[id]
		if ok && c.state != ContainerExited {
			c.state = ContainerExited
			cur.containers[id] = c
			continue
		}
		delete(run.exits, id)
	}
	for id := range run.ooms {
		if c, ok := cur.containers[id]; !ok || c.state == ContainerExited {
			if _, pending := run.exits[id]; !pending {
				delete(run.ooms, id)
			}
		}
	}
}

// pendingExits are the containers whose exit the watcher reported from
// containerd's event and CRI may not show yet: id itself, or the
// containers of the sandbox id.
func (w *watcher) pendingExits(id string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	run := w.run
	if run == nil || len(run.exits) == 0 {
		return nil
	}
	var out []string
	for cid := range run.exits {
		if cid == id || run.last.containers[cid].sandboxID == id {
			out = append(out, cid)
		}
	}
	return out
}

// Back-off of awaitCRIExits.
const (
	criExitInitial = 2 * time.Millisecond
	criExitMax     = 50 * time.Millisecond
)

// awaitCRIExits waits until CRI shows the exit of each container ids
// names, or no longer knows it: a stop or removal that CRI receives while
// it still deletes the exited task fails ("container is still running",
// "ttrpc: closed"), so a call after an exit reported early waits for CRI
// to catch up, as long as ctx allows.
func (r *criRuntime) awaitCRIExits(ctx context.Context, b *backend, ids []string) error {
	for _, id := range ids {
		for delay := criExitInitial; ; delay = min(2*delay, criExitMax) {
			c, err := b.containerStatus(ctx, id)
			if isNotFound(err) {
				break
			}
			if err == nil && c.State == ContainerExited {
				r.watch.withExit(c) // forgets the fact
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w: waiting for CRI to show the exit of %s: %w", errDeadline, id, ctx.Err())
			case <-time.After(delay):
			}
		}
	}
	return nil
}
