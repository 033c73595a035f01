// Command podstart measures how fast the host starts and deletes pods
// against the floor of the bare CRI calls, on one private containerd in one
// run. It must run as root inside this module:
//
//	go run ./bench/podstart [-n 20] [-host bin/podhost -plugins bin/plugins]
//
// It starts a private containerd (test/crisetup) and a `podhost run` with only
// the runtime-containerd plugin, then, interleaved so that both see the same
// load:
//
//  1. floor, one by one: bench/internal/floor with parallel 1;
//  2. host, one by one: apply → Running for each pod in turn, then delete →
//     containers stopped → sandbox removed for each in turn;
//  3. floor, at once: parallel n;
//  4. host, at once: n applies at once, then n deletes at once.
//
// Every pod is the floor's: host network, one busybox container running
// floor.TrapScript (exits 0 on SIGTERM), grace period 5 s. Apply → Running
// runs from just before the Apply call to the first pod watch event that
// shows phase Running with the container running. Delete → containers
// stopped and → sandbox removed run from just before the Delete call to the
// first CRI poll (every -poll) that lists the pod's containers all exited
// (or gone), and no sandbox of the pod's UID. It prints a markdown table:
// p50/p75/p90/p99 of each measure, the floor's next to it, and whether each
// p50 meets its goal (the rows of report.go; BENCHMARKS.md keeps
// the results). Host, plugin and containerd are stopped, and
// the temporary directory removed, whatever happens.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/podhost/podhost/bench/internal/floor"
	"github.com/podhost/podhost/bench/internal/hostproc"
	"github.com/podhost/podhost/bench/internal/stats"
	"github.com/podhost/podhost/images/localimages"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "podstart:", err)
		os.Exit(1)
	}
}

type options struct {
	pods      int
	hostBin   string
	pluginDir string
	poll      time.Duration
	keep      bool
	timeout   time.Duration
}

func run(ctx context.Context, args []string) (err error) {
	var o options
	fs := flag.NewFlagSet("podstart", flag.ContinueOnError)
	fs.IntVar(&o.pods, "n", 20, "pods per phase")
	fs.StringVar(&o.hostBin, "host", "", "host `binary` (default: build ./cmd/host into the temp dir)")
	fs.StringVar(&o.pluginDir, "plugins", "", "`dir` holding runtime-containerd (default: build it into the temp dir)")
	fs.DurationVar(&o.poll, "poll", 10*time.Millisecond, "CRI poll period while waiting for deletes")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary dir (host and containerd logs) after the run")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Second, "longest wait for one pod to run or go")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.pods < 1 {
		return fmt.Errorf("-n must be at least 1")
	}
	if (o.hostBin == "") != (o.pluginDir == "") {
		return fmt.Errorf("give both -host and -plugins, or neither")
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root (a private containerd)")
	}
	cmdline := "go run ./bench/podstart " + strings.Join(args, " ")
	began := time.Now()
	load0 := stats.LoadAvg()

	env, err := hostproc.StartEnv(ctx, "podstart", o.hostBin, o.pluginDir, o.keep)
	if err != nil {
		return err
	}
	defer func() { env.Close(ctx, err) }()
	ctrd, h := env.Containerd, env.Host

	b := &bench{o: o, ctrd: ctrd, host: h}
	rep := &report{pods: o.pods}
	floorOpts := floor.Options{Pods: o.pods, Image: localimages.BusyboxName, Grace: floor.GracePeriod, LogDir: filepath.Join(env.Dir, "floor-logs")}

	fmt.Fprintln(os.Stderr, "podstart: floor, one by one")
	floorOpts.Parallel = 1
	if rep.floorSeq, err = floor.Measure(ctx, ctrd.Runtime, floorOpts); err != nil {
		return fmt.Errorf("floor one by one: %w", err)
	}
	fmt.Fprintln(os.Stderr, "podstart: host, one by one")
	if rep.hostSeq, err = b.hostPhase(ctx, "seq", false); err != nil {
		return fmt.Errorf("host one by one: %w", err)
	}
	fmt.Fprintln(os.Stderr, "podstart: floor, at once")
	floorOpts.Parallel = o.pods
	if rep.floorPar, err = floor.Measure(ctx, ctrd.Runtime, floorOpts); err != nil {
		return fmt.Errorf("floor at once: %w", err)
	}
	fmt.Fprintln(os.Stderr, "podstart: host, at once")
	if rep.hostPar, err = b.hostPhase(ctx, "par", true); err != nil {
		return fmt.Errorf("host at once: %w", err)
	}

	version, _ := h.Client.Node(ctx)
	fmt.Printf("```sh\n%s\n```\n\n", strings.TrimSpace(cmdline))
	fmt.Printf("%s, %d pods per phase, host %s, %s; load average %s at start, %s at end; %s wall\n\n",
		time.Now().Format("2006-01-02"), o.pods, version.HostVersion, version.GoVersion,
		load0, stats.LoadAvg(), time.Since(began).Round(time.Second))
	fmt.Print(rep.table())
	return nil
}
