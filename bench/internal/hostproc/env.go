package hostproc

import (
	"context"
	"fmt"
	"os"
)

// Env is a Workspace with a host running on its containerd (only the
// runtime plugin), for benchmarks that need nothing else.
type Env struct {
	*Workspace
	Host *Host
}

// StartEnv prepares the workspace of prog (Prepare) and starts a host on
// its containerd. On error nothing is left running and the directory is
// kept.
func StartEnv(ctx context.Context, prog, hostBin, pluginDir string, keep bool) (*Env, error) {
	ws, err := Prepare(ctx, prog, hostBin, pluginDir, keep)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "%s: starting the host\n", prog)
	h, err := Start(ctx, Config{Dir: ws.Dir, Bin: ws.HostBin, PluginDir: ws.PluginDir, Endpoint: ws.Containerd.Endpoint()})
	if err != nil {
		ws.Close(err)
		return nil, err
	}
	return &Env{Workspace: ws, Host: h}, nil
}

// Close stops the host, then the workspace (Workspace.Close); failed is
// the run's error.
func (e *Env) Close(failed error) {
	e.Host.Close(e.prog, failed)
	e.Workspace.Close(failed)
}
