// Command volstart measures what the volume manager costs, on one private
// containerd and the loop CSI driver (cmd/csi-loopdriver) in one run. It
// must run as root inside this module:
//
//	go run ./bench/volstart [-n 20] [-rest-volumes 200 -rest-pods 20 -window 60s]
//
// It starts a private containerd (test/crisetup), csi-loopdriver with every
// volume it will need created at start, and a `podhost run` with
// runtime-containerd and volume-csi, then measures two things.
//
// Start: -n rounds, each of three steps on fresh volumes, so that every
// stage formats (mkfs) as a first use does:
//
//  1. plain: a pod without volumes, apply → Running, then deleted;
//  2. volume: the same pod with one CSI volume (a PersistentVolumeClaim of
//     the loop driver, defined in manifestDir), apply → Running, then
//     deleted and its volume unstaged;
//  3. driver: NodeStageVolume + NodePublishVolume of another volume, called
//     directly on the driver's socket, then unpublished and unstaged.
//
// The volume manager's cost is volume − plain − driver, at p50. Goal: under
// 50 ms.
//
// Rest: -rest-pods pods with -rest-volumes volumes among them, all
// Running, then the CPU of the host, of volume-csi and of the driver over
// -window, against the same pods without volumes (same run, baseline first).
// Goal: the host + volume-csi with the volumes mounted add under 1 % of one
// core.
//
// Pods: host network, one busybox container that exits on SIGTERM (the
// floor's), grace 0 s for deletes. Apply → Running runs from just before
// Apply to the first pod watch event with the container running. It prints
// markdown (the command, the load, and the tables) for BENCHMARKS.md.
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

	"github.com/podhost/podhost/bench/internal/hostproc"
	"github.com/podhost/podhost/bench/internal/stats"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "volstart:", err)
		os.Exit(1)
	}
}

type options struct {
	rounds      int
	restVolumes int
	restPods    int
	window      time.Duration
	settle      time.Duration
	keep        bool
	timeout     time.Duration
	profile     string
}

func run(ctx context.Context, args []string) (err error) {
	var o options
	fs := flag.NewFlagSet("volstart", flag.ContinueOnError)
	fs.IntVar(&o.rounds, "n", 20, "start rounds (plain, volume, driver)")
	fs.IntVar(&o.restVolumes, "rest-volumes", 200, "volumes mounted at rest (0: skip the rest phase)")
	fs.IntVar(&o.restPods, "rest-pods", 20, "pods that hold the volumes at rest")
	fs.DurationVar(&o.window, "window", 60*time.Second, "CPU window at rest")
	fs.DurationVar(&o.settle, "settle", 15*time.Second, "wait after the pods run before the CPU window")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary dir (logs) after the run")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "longest wait for one pod to run or go")
	fs.StringVar(&o.profile, "profile", "", "write CPU profiles of the host and runtime-containerd over the window with the volumes into `dir`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.rounds < 1 || o.restVolumes < 0 || (o.restVolumes > 0 && (o.restPods < 1 || o.restPods > o.restVolumes)) {
		return fmt.Errorf("need -n ≥ 1, and 1 ≤ -rest-pods ≤ -rest-volumes unless -rest-volumes is 0")
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root (a private containerd, loop devices and mounts)")
	}
	cmdline := strings.TrimSpace("go run ./bench/volstart " + strings.Join(args, " "))
	began, load0 := time.Now(), stats.Loadavg()

	if o.profile, err = hostproc.ProfileDir(o.profile); err != nil {
		return err
	}
	ws, err := hostproc.Prepare(ctx, "volstart", "", "", o.keep)
	if err != nil {
		return err
	}
	defer func() { ws.Close(err) }()
	fmt.Fprintln(os.Stderr, "volstart: building volume-csi and the loop driver")
	driverBin := filepath.Join(ws.Dir, "bin", "csi-loopdriver")
	if err := hostproc.BuildPackages(ctx, "volstart", map[string]string{
		driverBin: "./cmd/csi-loopdriver", filepath.Join(ws.PluginDir, "volume-csi"): "./plugins/volume-csi",
	}); err != nil {
		return err
	}

	var names []string
	for i := range o.rounds {
		names = append(names, fmt.Sprintf("start-%d", i), fmt.Sprintf("direct-%d", i))
	}
	for i := range o.restVolumes {
		names = append(names, fmt.Sprintf("rest-%d", i))
	}
	fmt.Fprintf(os.Stderr, "volstart: starting the loop driver with %d volumes\n", len(names))
	drv, err := startDriver(ctx, filepath.Join(ws.Dir, "driver"), driverBin, names)
	if err != nil {
		return err
	}
	defer func() {
		if serr := drv.stop(); serr != nil {
			fmt.Fprintln(os.Stderr, "volstart: stopping the driver:", serr)
		}
	}()

	fmt.Fprintln(os.Stderr, "volstart: starting the host")
	h, err := startHost(ctx, ws, o.profile, drv, names)
	if err != nil {
		return err
	}
	defer func() {
		if serr := h.stop(); serr != nil {
			fmt.Fprintln(os.Stderr, "volstart: stopping the host:", serr)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "volstart: host log tail:\n%s\n", h.LogTail(40))
		}
	}()
	w := newWatcher(ctx, h.Client)

	fmt.Fprintf(os.Stderr, "volstart: %d start rounds\n", o.rounds)
	starts, err := measureStarts(ctx, o, h, w, drv)
	if err != nil {
		return err
	}
	var rest *restResult
	if o.restVolumes > 0 {
		fmt.Fprintf(os.Stderr, "volstart: rest, %d pods with and without %d volumes\n", o.restPods, o.restVolumes)
		if rest, err = measureRest(ctx, o, h, w, drv); err != nil {
			return err
		}
	}

	version, _ := h.Client.Node(ctx)
	fmt.Printf("```sh\n%s\n```\n\n", cmdline)
	fmt.Printf("%s, host %s, %s; load average %s at start, %s at end; %s wall\n\n",
		time.Now().Format("2006-01-02"), version.HostVersion, version.GoVersion, load0, stats.Loadavg(), time.Since(began).Round(time.Second))
	fmt.Print(starts.table())
	if rest != nil {
		fmt.Println()
		fmt.Print(rest.table(o))
	}
	return nil
}
