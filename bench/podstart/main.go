// Command podstart measures how fast the host starts and deletes pods
// against the floor of the bare CRI calls, on one private containerd in one
// run. It must run as root inside this module:
//
//	go run ./bench/podstart [-n 20] [-host bin/podhost -plugins bin/plugins] [-calls [-rest 30s]] [-profile DIR]
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
//
// With -calls the plugin reaches containerd through test/criproxy, which
// counts its calls by method (calls.go): the table then also gives the
// calls per pod lifecycle of each host phase (first apply to last pod gone
// from the host API) next to the floor's seven, and, after a fifth phase
// that leaves -n pods running idle for -rest, the calls per minute at
// rest. The proxy adds a hop to every call, so the timings of a -calls run
// are not comparable with those of a run without.
//
// With -profile DIR the host and the plugin are CPU-profiled during the
// at-once host phase, for -profile-for from its first apply, into
// DIR/host-cpu.pprof and DIR/plugin-cpu.pprof (bench/internal/hostproc).
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
	"github.com/podhost/podhost/test/criproxy"
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
	calls     bool
	rest      time.Duration
	profile   string
	profileD  time.Duration
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
	fs.BoolVar(&o.calls, "calls", false, "count the plugin's calls to containerd (through test/criproxy) per pod lifecycle and at rest")
	fs.DurationVar(&o.rest, "rest", 30*time.Second, "with -calls: how long to count calls with -n pods idle")
	fs.StringVar(&o.profile, "profile", "", "CPU-profile host and runtime plugin during the at-once host phase into `dir`")
	fs.DurationVar(&o.profileD, "profile-for", 10*time.Second, "with -profile: how long to profile from the phase's first apply (whole seconds)")
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
	load0 := stats.Loadavg()

	ws, err := hostproc.Prepare(ctx, "podstart", o.hostBin, o.pluginDir, o.keep)
	if err != nil {
		return err
	}
	defer func() { ws.Close(err) }()
	dir, ctrd := ws.Dir, ws.Containerd
	o.hostBin, o.pluginDir = ws.HostBin, ws.PluginDir

	endpoint, calls := ctrd.Endpoint(), (*counter)(nil)
	if o.calls {
		proxy, err := criproxy.Start(ctx, ctrd.Socket, filepath.Join(dir, "cri-proxy.sock"))
		if err != nil {
			return err
		}
		defer proxy.Close()
		endpoint, calls = "unix://"+proxy.Path(), &counter{proxy: proxy}
	}

	fmt.Fprintln(os.Stderr, "podstart: starting the host")
	if o.profile, err = hostproc.ProfileDir(o.profile); err != nil {
		return err
	}
	h, err := hostproc.Start(ctx, hostproc.Config{Dir: dir, Bin: o.hostBin, PluginDir: o.pluginDir, Endpoint: endpoint, Env: hostproc.ProfileEnv(o.profile)})
	if err != nil {
		return err
	}
	defer func() { h.Close("podstart", err) }()

	b := &bench{o: o, ctrd: ctrd, host: h, calls: calls}
	rep := &report{pods: o.pods}
	floorOpts := floor.Options{Pods: o.pods, Image: localimages.BusyboxName, Grace: floor.GracePeriod, LogDir: filepath.Join(dir, "floor-logs")}

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
	profiled := h.ProfileCPU(ctx, "podstart", o.profile, o.profileD)
	if rep.hostPar, err = b.hostPhase(ctx, "par", true); err != nil {
		return fmt.Errorf("host at once: %w", err)
	}
	if err := profiled(); err != nil {
		return err
	}
	if o.calls {
		fmt.Fprintf(os.Stderr, "podstart: host, %d pods at rest for %s\n", o.pods, o.rest)
		if rep.rest, err = b.restCalls(ctx, o.rest); err != nil {
			return fmt.Errorf("host at rest: %w", err)
		}
	}

	version, _ := h.Client.Node(ctx)
	fmt.Printf("```sh\n%s\n```\n\n", strings.TrimSpace(cmdline))
	fmt.Printf("%s, %d pods per phase, host %s, %s; load average %s at start, %s at end; %s wall\n\n",
		time.Now().Format("2006-01-02"), o.pods, version.HostVersion, version.GoVersion,
		load0, stats.Loadavg(), time.Since(began).Round(time.Second))
	fmt.Print(rep.table())
	return nil
}
