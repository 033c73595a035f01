// Command probes measures what exec probes cost the host, and how steady
// their period is, against the same ExecSync calls made straight to
// containerd, on one private containerd in one run. It must run as root
// inside this module:
//
//	go run ./bench/probes [-pods 10] [-containers 10] [-period 1s] [-window 60s] [-warmup 10s] [-host bin/podhost -plugins bin/plugins]
//
// It starts a private containerd (test/crisetup) and a `podhost run` with
// only the runtime-containerd plugin, then runs two phases on pods × containers
// busybox containers (host network, floor.TrapScript):
//
//  1. direct: the pods have no probe; the harness itself calls CRI
//     ExecSync (timeout 1 s) in every container every period, each
//     container's loop on a time.Ticker, the loops of a pod started
//     together at a random offset (the host starts a pod's probe workers
//     together);
//  2. podhost: the pods are applied again with an exec readiness probe of
//     the same command, periodSeconds and timeoutSeconds 1; the host
//     probes.
//
// The command of both, `mktemp -p /ts`, leaves one file per execution in
// a hostPath directory of the container; the file times (the kernel's
// coarse clock, a few ms) are the execution times. After warmup, a window
// of measurement: the CPU time (utime+stime from /proc/<pid>/stat) of the
// harness, the host, the runtime plugin, and containerd with its shims
// (with their reaped children: runc and the exec'd commands), and the
// intervals between consecutive executions in each container. It prints a
// markdown table (report.go); BENCHMARKS.md keeps the results. Host,
// plugin and containerd are stopped, and the temporary directory removed,
// whatever happens.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/podhost/podhost/bench/internal/hostproc"
	"github.com/podhost/podhost/bench/internal/stats"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "probes:", err)
		os.Exit(1)
	}
}

type options struct {
	pods, containers int
	period           time.Duration
	window, warmup   time.Duration
	hostBin          string
	pluginDir        string
	keep             bool
	timeout          time.Duration
}

func run(ctx context.Context, args []string) (err error) {
	var o options
	fs := flag.NewFlagSet("probes", flag.ContinueOnError)
	fs.IntVar(&o.pods, "pods", 10, "pods")
	fs.IntVar(&o.containers, "containers", 10, "containers per pod, each probed")
	fs.DurationVar(&o.period, "period", time.Second, "probe period (whole seconds)")
	fs.DurationVar(&o.window, "window", 60*time.Second, "measurement window of each phase")
	fs.DurationVar(&o.warmup, "warmup", 10*time.Second, "wait before the window, once every container runs")
	fs.StringVar(&o.hostBin, "host", "", "host `binary` (default: build ./cmd/host into the temp dir)")
	fs.StringVar(&o.pluginDir, "plugins", "", "`dir` holding runtime-containerd (default: build it into the temp dir)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary dir (host and containerd logs) after the run")
	fs.DurationVar(&o.timeout, "timeout", 3*time.Minute, "longest wait for the pods to run or go")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case o.pods < 1 || o.containers < 1:
		return fmt.Errorf("-pods and -containers must be at least 1")
	case o.period < time.Second || o.period%time.Second != 0:
		return fmt.Errorf("-period must be whole seconds (periodSeconds), at least 1s")
	case o.window < 2*o.period:
		return fmt.Errorf("-window must hold at least two periods")
	case (o.hostBin == "") != (o.pluginDir == ""):
		return fmt.Errorf("give both -host and -plugins, or neither")
	case os.Geteuid() != 0:
		return fmt.Errorf("needs root (a private containerd)")
	}
	cmdline := "go run ./bench/probes " + strings.Join(args, " ")
	began := time.Now()
	load0 := stats.Loadavg()

	env, err := hostproc.StartEnv(ctx, "probes", o.hostBin, o.pluginDir, o.keep)
	if err != nil {
		return err
	}
	defer func() { env.Close(err) }()
	ctrd, h := env.Containerd, env.Host

	b := &bench{o: o, dir: env.Dir, ctrd: ctrd, host: h}
	rep := &report{o: o}
	fmt.Fprintln(os.Stderr, "probes: direct ExecSync phase")
	if rep.direct, err = b.directPhase(ctx); err != nil {
		return fmt.Errorf("direct phase: %w", err)
	}
	fmt.Fprintln(os.Stderr, "probes: podhost phase")
	if rep.host, err = b.hostPhase(ctx); err != nil {
		return fmt.Errorf("podhost phase: %w", err)
	}

	version, _ := h.Client.Node(ctx)
	fmt.Printf("```sh\n%s\n```\n\n", strings.TrimSpace(cmdline))
	fmt.Printf("%s, %d pods × %d containers, period %s, window %s; host %s, %s; load average %s at start, %s at end; %s wall\n\n",
		time.Now().Format("2006-01-02"), o.pods, o.containers, o.period, o.window, version.HostVersion, version.GoVersion,
		load0, stats.Loadavg(), time.Since(began).Round(time.Second))
	fmt.Print(rep.table())
	return nil
}
