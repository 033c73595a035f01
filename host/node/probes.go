package node

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/prober"
	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/lifecycle"
)

// runtimeExec runs exec probes and hooks through the node's runtime
// manager, which is built after the prober's runner.
type runtimeExec struct{ n *Node }

func (e runtimeExec) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (runtimemanager.ExecResult, error) {
	return e.n.runtime.ExecSync(ctx, id, cmd, timeout)
}

// probeSyncBuffer is how many pod syncs the probe workers may ask for
// before one waits for the sync loop.
const probeSyncBuffer = 64

// newProbes builds the probe manager: its workers read the runtime cache,
// ask the pod worker whether a pod terminates, kill through the runtime
// manager, make the status manager apply a changed result at once and ask
// the sync loop (syncs) to sync a pod whose sidecar started.
func (n *Node) newProbes(runner *prober.Runner, results *lifecycle.ProbeResults, syncs chan<- types.UID, logger *slog.Logger) *lifecycle.ProbeManager {
	return lifecycle.NewProbeManager(lifecycle.ProbeManagerConfig{
		Clock: n.clock, Runner: runner, Killer: n.runtime, Results: results, Statuses: n.cache,
		Pods: n.core, Recorder: n.events, Metrics: lifecycle.NewProbeMetrics(n.cfg.Registry),
		Logger: logger, OnChange: n.status.RefreshProbes, Syncs: syncs,
	})
}
