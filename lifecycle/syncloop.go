package lifecycle

import (
	"context"
	"log/slog"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// syncTickPeriod is how often due re-syncs are collected from the queue.
const syncTickPeriod = time.Second

// ConfigSource is the desired pod set.
type ConfigSource interface {
	// Pods returns the desired pods (mirror pods excluded) and the mirror pods.
	Pods() (pods, mirrors []*v1.Pod)
	// SourcesReady reports whether every config source has reported once.
	SourcesReady() bool
}

// ConfigChange is one change of the desired pod set: the pod worker
// updates it implies, and Commit, which makes the ConfigSource show the
// new set. The sync loop calls Commit and hands the updates to the
// workers in one step, so housekeeping never reads a set whose changes the
// workers have not received: a new pod would look unknown to them (a
// spurious re-create) and a removed one orphaned.
type ConfigChange struct {
	Updates []UpdatePodOptions
	// Commit may be nil when the ConfigSource needs no switch.
	Commit func()
}

// SyncLoop is the node's main loop: it turns PLEG events, probe requests
// and due re-syncs into sync requests and runs housekeeping every two seconds once every
// config source has reported.
type SyncLoop struct {
	Config      ConfigSource
	Workers     *Workers
	Housekeeper *Housekeeper
	// Events may be nil (no PLEG).
	Events <-chan PodLifecycleEvent
	// Updates carries the changes of the desired pod set, in order; nil
	// means the config never changes. They are handed to the workers
	// between housekeeping passes, never during one.
	Updates <-chan ConfigChange
	// ProbeSyncs, when set, carries the UIDs of pods to sync now because
	// a probe result needs the runtime (ProbeManagerConfig.Syncs).
	ProbeSyncs <-chan types.UID
	// ShouldSync, when set, is asked of every desired pod each sync tick:
	// those it names are synced now (the kubelet's pod sync loop
	// handlers, e.g. Syncer.DueForDeadline).
	ShouldSync func(*v1.Pod) bool
	Clock      Clock
	Logger     *slog.Logger
}

// Run loops until ctx ends.
func (l *SyncLoop) Run(ctx context.Context) {
	syncTick := l.Clock.After(syncTickPeriod)
	housekeeping := l.Clock.After(HousekeepingPeriod)
	for {
		select {
		case <-ctx.Done():
			return
		case change := <-l.Updates:
			if change.Commit != nil {
				change.Commit()
			}
			for _, u := range change.Updates {
				l.Workers.UpdatePod(u)
			}
		case ev := <-l.Events:
			if ev.Type != ContainerRemoved {
				l.syncConfigPods(map[string]bool{string(ev.ID): true})
			}
		case uid := <-l.ProbeSyncs:
			l.syncConfigPods(map[string]bool{string(uid): true})
		case <-syncTick:
			due := map[string]bool{}
			for _, uid := range l.Workers.Core().Queue().GetWork() {
				due[string(uid)] = true
			}
			if l.ShouldSync != nil {
				pods, _ := l.Config.Pods()
				for _, pod := range pods {
					if l.ShouldSync(pod) {
						due[string(pod.UID)] = true
					}
				}
			}
			l.syncConfigPods(due)
			syncTick = l.Clock.After(syncTickPeriod)
		case <-housekeeping:
			l.HousekeepingOnce(ctx)
			housekeeping = l.Clock.After(HousekeepingPeriod)
		}
	}
}

// HousekeepingOnce runs one housekeeping pass unless a config source has
// not reported yet; it reports whether the pass ran.
func (l *SyncLoop) HousekeepingOnce(ctx context.Context) bool {
	if !l.Config.SourcesReady() {
		return false
	}
	pods, mirrors := l.Config.Pods()
	if err := l.Housekeeper.Cleanup(ctx, pods, mirrors); err != nil && l.Logger != nil {
		l.Logger.Error("housekeeping failed", "err", err)
	}
	return true
}

// syncConfigPods sends a sync for each config pod in the set. Pods without
// config are driven only by SyncKnownPods.
func (l *SyncLoop) syncConfigPods(uids map[string]bool) {
	if len(uids) == 0 {
		return
	}
	pods, _ := l.Config.Pods()
	for _, pod := range pods {
		if uids[string(pod.UID)] {
			l.Workers.UpdatePod(UpdatePodOptions{UpdateType: UpdateSync, Pod: pod, StartTime: l.Clock.Now()})
		}
	}
}
