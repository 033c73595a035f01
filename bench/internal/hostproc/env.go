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

// Env is what a benchmark runs against: a temporary directory, a private
// containerd in it and a host on that containerd.
type Env struct {
	Dir        string
	Containerd *crisetup.Containerd
	Host       *Host
	name       string
	keep       bool
}

// StartEnv makes a temporary directory named for the benchmark, builds
// the host and runtime-containerd into it unless hostBin and pluginDir
// are given, starts a private containerd (with the busybox image) and a
// host on it. Progress goes to stderr, after name. On error nothing is
// left running and the directory is kept.
func StartEnv(ctx context.Context, name, hostBin, pluginDir string, keep bool) (e *Env, err error) {
	dir, err := os.MkdirTemp("", name+"-")
	if err != nil {
		return nil, err
	}
	e = &Env{Dir: dir, name: name, keep: keep}
	defer func() {
		if err != nil {
			e.Close(ctx, err)
		}
	}()
	if hostBin == "" {
		e.say("building host and runtime-containerd")
		if hostBin, pluginDir, err = Build(ctx, filepath.Join(dir, "bin"), name); err != nil {
			return nil, err
		}
	}
	e.say("starting a private containerd")
	if e.Containerd, err = crisetup.Start(ctx, filepath.Join(dir, "containerd")); err != nil {
		return nil, fmt.Errorf("containerd: %w", err)
	}
	if err := floor.CheckImage(ctx, e.Containerd.Image, localimages.BusyboxName); err != nil {
		return nil, err
	}
	e.say("starting the host")
	if e.Host, err = Start(ctx, dir, hostBin, pluginDir, e.Containerd.Endpoint()); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Env) say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, e.name+": "+format+"\n", args...)
}

// Close stops the host, then containerd (removing every sandbox), and
// removes the directory, unless the run failed (failed is not nil) or was
// asked to keep it: then it says where it is, with the host log's tail.
func (e *Env) Close(ctx context.Context, failed error) {
	if e.Host != nil {
		if err := e.Host.Stop(); err != nil {
			e.say("stopping the host: %v", err)
		}
		if failed != nil {
			e.say("host log tail:\n%s", e.Host.LogTail(40))
		}
	}
	if e.Containerd != nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
		defer cancel()
		if err := e.Containerd.Stop(sctx); err != nil {
			e.say("stopping containerd: %v", err)
		}
	}
	if e.keep || failed != nil {
		e.say("logs kept in %s", e.Dir)
		return
	}
	_ = os.RemoveAll(e.Dir)
}
