package node

import (
	"context"
	"log/slog"
	"time"

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

// newProbes builds the probe manager: its workers read the runtime cache,
// ask the pod worker whether a pod terminates, kill through the runtime
// manager and make the status manager apply a changed result at once.
func (n *Node) newProbes(runner *prober.Runner, results *lifecycle.ProbeResults, logger *slog.Logger) *lifecycle.ProbeManager {
	return lifecycle.NewProbeManager(lifecycle.ProbeManagerConfig{
		Clock: n.clock, Runner: runner, Killer: n.runtime, Results: results, Statuses: n.cache,
		Pods: n.core, Recorder: n.events, Metrics: lifecycle.NewProbeMetrics(n.cfg.Registry),
		Logger: logger, OnChange: n.status.RefreshProbes,
	})
}
