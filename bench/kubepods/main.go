// Command kubepods measures podhost as a node of a real API server against
// the floor of the bare CRI calls, on one private containerd in one run
// (BENCHMARKS.md, "Pods through a real API server against the CRI floor").
// It must run as root inside this module, with
// the kube binaries built (make kube-binaries):
//
//	go run ./bench/kubepods [-n 20] [-rounds 1] [-host bin/podhost -plugins bin/plugins] [-profile DIR]
//
// It starts a private containerd (test/crisetup), etcd and kube-apiserver
// (test/kubecluster) and one `podhost run` in Kubernetes mode: node
// kubepods-node with its own credentials, only the runtime-containerd
// plugin. Then, for each round, interleaved so that both see the same
// load:
//
//  1. floor: bench/internal/floor with -n pods at once (parallel n);
//  2. node: -n pods created through the API at once → each Running as the
//     API shows it; then deleted at once (the pod's grace period) → each
//     gone from the API.
//
// Every pod is the floor's: host network, one busybox container running
// floor.TrapScript (exits 0 on SIGTERM), grace period 5 s, bound to the
// node, no service-account token. Create → Running runs from just before
// the Create call to the first watch event (an informer on the admin
// client) with phase Running and the container running; delete → gone
// from just before the Delete call to the watch's DELETED event. Against
// them: the floor's RunPodSandbox → StartContainer returned, and
// StopContainer(5 s) + StopPodSandbox + RemovePodSandbox. It prints a
// markdown table with p50 and p90 of each and whether each meets issue
// 12's goal (Running ≤ 1.3× floor, gone ≤ 1.5× floor); BENCHMARKS.md keeps
// the results. With -profile DIR the host and the plugin are CPU-profiled
// during the last round's node phase, for -profile-for from its first
// create, into DIR/host-cpu.pprof and DIR/plugin-cpu.pprof. Everything it
// started is stopped and its temporary directory removed, whatever
// happens.
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
	"github.com/podhost/podhost/test/kubecluster"
)

// nodeName is the node the host registers as.
const nodeName = "kubepods-node"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kubepods:", err)
		os.Exit(1)
	}
}

type options struct {
	pods, rounds     int
	hostBin, plugins string
	keep             bool
	timeout          time.Duration
	profile          string
	profileFor       time.Duration
}

func run(ctx context.Context, args []string) (err error) {
	var o options
	fs := flag.NewFlagSet("kubepods", flag.ContinueOnError)
	fs.IntVar(&o.pods, "n", 20, "pods at once")
	fs.IntVar(&o.rounds, "rounds", 1, "floor + node rounds; the percentiles pool every round")
	fs.StringVar(&o.hostBin, "host", "", "host `binary` (default: build ./cmd/host into the temp dir)")
	fs.StringVar(&o.plugins, "plugins", "", "`dir` holding runtime-containerd (default: build it into the temp dir)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary dir (host, containerd and API server logs) after the run")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "longest wait for all pods to run, or to go")
	fs.StringVar(&o.profile, "profile", "", "CPU-profile host and runtime plugin during the last round's node phase into `dir`")
	fs.DurationVar(&o.profileFor, "profile-for", 10*time.Second, "with -profile: how long to profile from the phase's first create (whole seconds)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.pods < 1 || o.rounds < 1 {
		return fmt.Errorf("-n and -rounds must be at least 1")
	}
	if (o.hostBin == "") != (o.plugins == "") {
		return fmt.Errorf("give both -host and -plugins, or neither")
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root (a private containerd)")
	}
	cmdline := strings.TrimSpace("go run ./bench/kubepods " + strings.Join(args, " "))
	began, load0 := time.Now(), stats.Loadavg()

	ws, err := hostproc.Prepare(ctx, "kubepods", o.hostBin, o.plugins, o.keep)
	if err != nil {
		return err
	}
	defer func() { ws.Close(err) }()
	dir, ctrd := ws.Dir, ws.Containerd
	o.hostBin, o.plugins = ws.HostBin, ws.PluginDir

	fmt.Fprintln(os.Stderr, "kubepods: starting etcd and kube-apiserver")
	cluster, err := kubecluster.Start(ctx, filepath.Join(dir, "cluster"), kubecluster.Options{Nodes: []string{nodeName}})
	if err != nil {
		return fmt.Errorf("control plane: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "kubepods: control plane log tails:\n%s\n", cluster.Logs(20))
		}
		if serr := cluster.Stop(sctx); serr != nil {
			fmt.Fprintln(os.Stderr, "kubepods: stopping the control plane:", serr)
		}
	}()
	kubeconfig, err := cluster.NodeKubeconfig(nodeName)
	if err != nil {
		return err
	}

	if o.profile, err = hostproc.ProfileDir(o.profile); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "kubepods: starting the node")
	h, err := hostproc.Start(ctx, hostproc.Config{Dir: dir, Bin: o.hostBin, PluginDir: o.plugins, Endpoint: ctrd.Endpoint(),
		Extra: fmt.Sprintf("nodeName: %s\nkubernetes:\n  kubeconfig: %s\n  nodeIP: 127.0.0.1\n", nodeName, kubeconfig),
		Env:   hostproc.ProfileEnv(o.profile)})
	if err != nil {
		return err
	}
	defer func() { h.Close("kubepods", err) }()

	b, err := newBench(ctx, o, cluster.Client, h)
	if err != nil {
		return err
	}
	if err := b.waitNodeReady(ctx); err != nil {
		return err
	}
	rep := &report{pods: o.pods}
	floorOpts := floor.Options{Pods: o.pods, Parallel: o.pods, Image: localimages.BusyboxName, Grace: floor.GracePeriod,
		LogDir: filepath.Join(dir, "floor-logs")}
	for r := range o.rounds {
		fmt.Fprintf(os.Stderr, "kubepods: round %d: floor, %d at once\n", r+1, o.pods)
		fl, err := floor.Measure(ctx, ctrd.Runtime, floorOpts)
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		rep.floor = append(rep.floor, fl)
		fmt.Fprintf(os.Stderr, "kubepods: round %d: node, %d at once\n", r+1, o.pods)
		profileDir := ""
		if r == o.rounds-1 {
			profileDir = o.profile
		}
		profiled := h.ProfileCPU(ctx, "kubepods", profileDir, o.profileFor)
		res, err := b.phase(ctx, fmt.Sprintf("kp-%d", r))
		if err != nil {
			return fmt.Errorf("node: %w", err)
		}
		if err := profiled(); err != nil {
			return err
		}
		rep.node = append(rep.node, res)
	}

	version, _ := h.Client.Node(ctx)
	fmt.Printf("```sh\n%s\n```\n\n", cmdline)
	fmt.Printf("%s, %d pods at once, rounds %d, host %s, %s; load average %s at start, %s at end; %s wall\n\n",
		time.Now().Format("2006-01-02"), o.pods, o.rounds, version.HostVersion, version.GoVersion,
		load0, stats.Loadavg(), time.Since(began).Round(time.Second))
	fmt.Print(rep.table())
	return nil
}
