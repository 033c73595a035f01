package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/events"
	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/state"
	"github.com/podhost/podhost/lifecycle"
)

// Graceful node shutdown, as the kubelet does it on systemd's
// PrepareForShutdown, triggered here by `podhost node shutdown`: every pod is
// stopped within the shutdown grace period without being marked Failed,
// the shutdown is recorded in the state database, and the next start of
// the host starts the stopped pods again.

// bootIDPath is the kernel's ID of the current boot.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

// ErrNodeShuttingDown is returned for a pod the host will not start because
// the node is shutting down.
var ErrNodeShuttingDown = errors.New("node is shutting down")

// shutdownState is what the node remembers of a shutdown in progress or
// done: from then on no pod starts, and the pods it stopped keep their
// phase.
type shutdownState struct {
	mu     sync.Mutex
	active bool
	kept   map[types.UID]v1.PodPhase
}

// activate makes the node start no pod from now on.
func (s *shutdownState) activate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active = true
}

// keep records the phase each target that is not being deleted keeps.
func (s *shutdownState) keep(targets []shutdownTarget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kept == nil {
		s.kept = map[types.UID]v1.PodPhase{}
	}
	for _, t := range targets {
		if !t.deleting {
			s.kept[t.pod.UID] = t.phase
		}
	}
}

func (s *shutdownState) isActive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}

// stopped returns the phase a pod stopped by the shutdown keeps.
func (s *shutdownState) stopped(uid types.UID) (v1.PodPhase, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.kept[uid]
	return p, ok
}

// readBootID returns the current boot ID, or "" if it cannot be read.
func readBootID() string {
	b, err := os.ReadFile(bootIDPath)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Shutdown stops every pod that has not finished within budget (each pod
// gets its own grace period, capped by budget), keeping their phase, and
// records the shutdown and the boot ID in the state database. From then on
// this host starts no pod; the pods start again when the host starts
// again. Pods already being deleted, in the desired set or out of it, are
// held to the budget too, and finish as deleted pods. It returns once
// every pod stopped or its kill timed out.
func (n *Node) Shutdown(ctx context.Context, budget time.Duration) (localapi.ShutdownResult, error) {
	// No pod starts from here on, so every pod that may run is among those
	// read below: one committed to the desired set after the read is
	// refused by shutdownSyncer.
	n.shutdown.activate()
	pods, _ := n.desired.Pods()
	desired := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		desired[p.UID] = true
	}
	pods = append(pods, n.leaving.list(desired, n.core.ShouldPodBeFinished)...)
	targets := planShutdown(pods, n.status.PodStatus, budget)
	n.shutdown.keep(targets)
	mark := state.ShutdownMark{BootID: readBootID(), Started: n.clock.Now(), GracePeriod: budget}
	if old, ok, err := n.store.ShutdownMark(ctx); err == nil && ok {
		mark.Pods = old.Pods // a repeated shutdown keeps the pods the first one stopped
	}
	for _, t := range targets {
		if !t.deleting {
			mark.Pods = append(mark.Pods, t.pod.UID)
		}
	}
	if err := n.store.PutShutdownMark(ctx, mark); err != nil {
		return localapi.ShutdownResult{}, err
	}
	n.log.Warn("node shutdown: stopping pods", "pods", len(targets), "grace_period", budget, "boot_id", mark.BootID)
	n.events.Record(events.Object{Kind: events.KindNode, Name: n.cfg.NodeName}, events.Normal, ReasonNodeShutdown,
		fmt.Sprintf("node shutdown: stopping %d pods within %s", len(targets), budget))

	res := localapi.ShutdownResult{BootID: mark.BootID, GracePeriodSeconds: int64(budget / time.Second), Started: mark.Started}
	res.Pods = make([]localapi.ShutdownPod, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		res.Pods[i] = localapi.ShutdownPod{Namespace: t.pod.Namespace, Name: t.pod.Name, UID: string(t.pod.UID),
			GracePeriodSeconds: t.grace, Phase: string(t.phase)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			grace := t.grace
			var statusFn func(*v1.PodStatus)
			if !t.deleting {
				statusFn = func(s *v1.PodStatus) { markShutdownStatus(t.phase, s) }
			}
			kill := lifecycle.PodKiller{Workers: n.workers, Clock: n.clock, Recorder: n.events}
			if err := kill.KillPodNow(ctx, t.pod, &grace, statusFn); err != nil {
				res.Pods[i].Error = err.Error()
				n.log.Error("node shutdown: pod not stopped in time", "pod", t.pod.Namespace+"/"+t.pod.Name, "uid", t.pod.UID, "err", err)
			}
		}()
	}
	wg.Wait()
	res.Finished = n.clock.Now()
	mark.Finished = res.Finished
	if err := n.store.PutShutdownMark(context.WithoutCancel(ctx), mark); err != nil {
		n.log.Error("node shutdown: recording the end", "err", err)
	}
	n.log.Warn("node shutdown: pods stopped; the host starts no pod until it is restarted",
		"pods", len(targets), "took", res.Finished.Sub(res.Started))
	return res, ctx.Err()
}

// recoverFromShutdown runs at start, before the lifecycle: when the last
// run shut the node down, the pods it stopped get their records reset to
// Pending so that they start again (restartPolicy Never included: the
// shutdown was not their failure), and the mark is cleared.
func (n *Node) recoverFromShutdown(ctx context.Context) error {
	mark, ok, err := n.store.ShutdownMark(ctx)
	if err != nil || !ok {
		return err
	}
	recs, err := n.store.List(ctx)
	if err != nil {
		return err
	}
	restart := recordsToRestart(mark, recs)
	for _, r := range restart {
		if err := n.store.Put(ctx, r.Namespace, r.Name, r.UID, v1.PodStatus{Phase: v1.PodPending}); err != nil {
			return err
		}
	}
	boot := readBootID()
	n.log.Info("the node was shut down by the host; starting the pods it stopped again",
		"shutdown_at", mark.Started, "finished", !mark.Finished.IsZero(), "rebooted", boot != mark.BootID,
		"boot_id", mark.BootID, "now_boot_id", boot, "pods", len(restart))
	n.events.Record(events.Object{Kind: events.KindNode, Name: n.cfg.NodeName}, events.Normal, ReasonNodeShutdown,
		fmt.Sprintf("node was shut down at %s (boot %s, now %s); starting %d stopped pods again",
			mark.Started.UTC().Format(time.RFC3339), mark.BootID, boot, len(restart)))
	return n.store.ClearShutdownMark(ctx)
}

// shutdownSyncer keeps a node shutdown's promises in the pod lifecycle:
// no pod starts once the node is shutting down, and a pod the shutdown
// stopped is not finished as Failed: it keeps its phase, and its
// containers and sandbox are removed so that it starts afresh next time.
type shutdownSyncer struct {
	lifecycle.PodSyncer
	node *Node
}

func (s *shutdownSyncer) SyncPod(ctx context.Context, updateType lifecycle.UpdateType, pod, mirror *v1.Pod, status *lifecycle.PodStatus) (bool, error) {
	if s.node.shutdown.isActive() {
		return false, fmt.Errorf("not starting pod %s: %w", lifecycle.PodFullName(pod), ErrNodeShuttingDown)
	}
	return s.PodSyncer.SyncPod(ctx, updateType, pod, mirror, status)
}

func (s *shutdownSyncer) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, status *lifecycle.PodStatus) error {
	kept, ok := s.node.shutdown.stopped(pod.UID)
	if !ok || pod.DeletionTimestamp != nil {
		return s.PodSyncer.SyncTerminatedPod(ctx, pod, status)
	}
	cached, _ := s.node.status.PodStatus(pod.UID)
	final := lifecycle.GeneratePodStatus(pod, status, cached, true, nil)
	lifecycle.SetHostIPs(pod, &final, s.node.cfg.NodeIPs)
	markShutdownStatus(kept, &final)
	s.node.status.SetPodStatus(pod, final)
	if err := s.node.runtime.RemovePod(ctx, pod.UID); err != nil {
		return fmt.Errorf("removing pod %s stopped by the node shutdown: %w", lifecycle.PodFullName(pod), err)
	}
	return nil
}

// ShuttingDown reports whether this host shut the node down: it then
// starts no pod until it is restarted.
func (n *Node) ShuttingDown() bool { return n.shutdown.isActive() }
