package hostproc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/podhost/podhost/bench/internal/floor"
	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/test/crisetup"
)

// Workspace is what a host benchmark starts from: a temporary directory,
// the host and plugin binaries, and a private containerd holding the
// floor's busybox image.
type Workspace struct {
	// Dir is the temporary directory; everything of the run lives there.
	Dir string
	// HostBin and PluginDir are the binaries the host runs.
	HostBin, PluginDir string
	// Containerd is the private containerd under Dir.
	Containerd *crisetup.Containerd

	prog string
	keep bool
}

// Prepare makes the workspace of the program prog (the name it reports
// under): it builds the binaries into it unless hostBin and pluginDir are
// given, and starts containerd. keep keeps the directory after Close.
func Prepare(ctx context.Context, prog, hostBin, pluginDir string, keep bool) (w *Workspace, err error) {
	dir, err := os.MkdirTemp("", prog+"-")
	if err != nil {
		return nil, err
	}
	w = &Workspace{Dir: dir, HostBin: hostBin, PluginDir: pluginDir, prog: prog, keep: keep}
	defer func() {
		if err != nil {
			w.Close(err)
		}
	}()
	if w.HostBin == "" {
		fmt.Fprintf(os.Stderr, "%s: building host and runtime-containerd\n", prog)
		if w.HostBin, w.PluginDir, err = Build(ctx, filepath.Join(dir, "bin"), prog); err != nil {
			return w, err
		}
	}
	fmt.Fprintf(os.Stderr, "%s: starting a private containerd\n", prog)
	if w.Containerd, err = crisetup.Start(ctx, filepath.Join(dir, "containerd")); err != nil {
		return w, fmt.Errorf("containerd: %w", err)
	}
	return w, floor.CheckImage(ctx, w.Containerd.Image, localimages.BusyboxName)
}

// Close stops containerd and removes the directory, unless the run asked
// to keep it or failed (runErr), when it says where the logs are.
func (w *Workspace) Close(runErr error) {
	if w.Containerd != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := w.Containerd.Stop(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "%s: stopping containerd: %v\n", w.prog, err)
		}
	}
	if w.keep || runErr != nil {
		fmt.Fprintf(os.Stderr, "%s: logs kept in %s\n", w.prog, w.Dir)
		return
	}
	_ = os.RemoveAll(w.Dir)
}

// ProfileDir makes dir (for -profile) and returns it absolute; "" stays "".
func ProfileDir(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return abs, os.MkdirAll(abs, 0o700)
}
