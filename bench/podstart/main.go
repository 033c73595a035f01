// Command podstart measures how fast the host starts and deletes pods
// against the floor of the bare CRI calls, on one private containerd in one
// run. It must run as root inside this module:
//
//	go run ./bench/podstart [-n 20] [-host bin/podhost -plugins bin/plugins] [-calls [-rest 30s]] [-profile DIR]
//	                        [-usage [-usage-window 30s -usage-settle 10s]] [-exits]
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
// (or gone), and no sandbox of the pod's UID. The floor's stop and teardown
// run under the same poll (floorProbe), so that the poll's load on
// containerd weighs on both sides. It prints a markdown table:
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
//
// With -usage (usage.go) the harness samples the CPU of the host, the
// plugin and containerd for -usage-window before the first phase, once
// -usage-settle has passed with host and plugin up and no pod (the idle
// baseline), and, after the other phases, with -n of the same pods
// running at rest (applied at once, -usage-settle after the last one
// runs), their CPU, RSS and the shims' sum; then it deletes those pods.
// The table gives each process's CPU idle, with the pods and over idle,
// its RSS (and the anonymous part of it), and the lines "plugin +
// containerd over idle" and "host + plugin RSS" against the goals for 50
// pods (0.2 % of one core, 48 MiB; BENCHMARKS.md).
//
// With -exits (exits.go) the harness, last, applies -n pods one at a time,
// each with one busybox container running `sh -c 'sleep 1; exit 3'` and
// restartPolicy Never, and times each container's exit from containerd's
// FinishedAt to the first host pod watch event that shows it terminated
// with exit code 3 (goal ≤ 20 ms at p50), and to the first answer of a
// ContainerStatus poll every 5 ms that shows it EXITED (CRI's own view,
// for comparison); each pod is deleted before the next is applied, and
// the table also gives delete → gone from the host API.
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

	usage       bool
	usageWindow time.Duration
	usageSettle time.Duration
	exits       bool
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
	fs.BoolVar(&o.usage, "usage", false, "sample CPU of host, plugin and containerd idle (before any pod) and, after the other phases, CPU and RSS with -n pods at rest")
	fs.DurationVar(&o.usageWindow, "usage-window", 30*time.Second, "with -usage: the CPU window, idle and at rest")
	fs.DurationVar(&o.usageSettle, "usage-settle", 10*time.Second, "with -usage: the wait before each window")
	fs.BoolVar(&o.exits, "exits", false, "time -n container exits, one pod at a time, from containerd's FinishedAt to the host's pod watch and to a 5 ms CRI poll")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.pods < 1 {
		return fmt.Errorf("-n must be at least 1")
	}
	if o.usage && (o.usageWindow <= 0 || o.usageSettle < 0) {
		return fmt.Errorf("-usage-window must be positive and -usage-settle not negative")
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
	var idle hostproc.Usage
	if o.usage {
		if idle, err = b.idleUsage(ctx); err != nil {
			return fmt.Errorf("idle usage: %w", err)
		}
	}
	floorOpts := floor.Options{Pods: o.pods, Image: localimages.BusyboxName, Grace: floor.GracePeriod, LogDir: filepath.Join(dir, "floor-logs"), Probe: b.floorProbe}

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
	if o.usage {
		fmt.Fprintf(os.Stderr, "podstart: host, usage with %d pods at rest\n", o.pods)
		if rep.usage, err = b.restUsage(ctx, idle); err != nil {
			return fmt.Errorf("usage at rest: %w", err)
		}
	}
	if o.exits {
		fmt.Fprintf(os.Stderr, "podstart: host, %d container exits one by one\n", o.pods)
		if rep.exits, err = b.exitsPhase(ctx); err != nil {
			return fmt.Errorf("exits: %w", err)
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
