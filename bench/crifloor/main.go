// Command crifloor measures the floor for podhost's pod benchmarks: the
// latency of the bare CRI calls a node agent makes, issued straight to
// containerd with no agent in between. For each of -n pods (host network,
// one busybox container that exits on SIGTERM, grace period 5 s) it times
//
//	start:    RunPodSandbox → CreateContainer → StartContainer returned
//	stop:     StopContainer(timeout 5) returned
//	teardown: StopPodSandbox + RemovePodSandbox
//
// running -parallel pods at a time in each phase, and prints percentiles as
// a markdown table. The measuring lives in bench/internal/floor, which
// bench/podstart shares. Point it at a private containerd that has the local
// images, e.g. one from hack/containerd-up.sh:
//
//	crifloor -endpoint unix:///tmp/ctrd/containerd.sock -n 20 -parallel 4
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/bench/internal/floor"
	"github.com/podhost/podhost/images/localimages"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "crifloor:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	var (
		o        floor.Options
		endpoint string
	)
	fs := flag.NewFlagSet("crifloor", flag.ContinueOnError)
	fs.StringVar(&endpoint, "endpoint", "", "CRI `endpoint`, unix:///path/to/containerd.sock (required)")
	fs.IntVar(&o.Pods, "n", 20, "number of pods")
	fs.IntVar(&o.Parallel, "parallel", 1, "pods in flight at a time in each phase")
	fs.StringVar(&o.Image, "image", localimages.BusyboxName, "container image; it must already be in containerd")
	fs.DurationVar(&o.Grace, "grace", floor.GracePeriod, "StopContainer timeout")
	fs.StringVar(&o.LogDir, "logs", "", "`dir` for CRI container logs (default: a temporary dir, removed after)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !strings.HasPrefix(endpoint, "unix://") {
		return fmt.Errorf("-endpoint must be unix:///path, got %q (start one with hack/containerd-up.sh DIR)", endpoint)
	}
	if o.Pods < 1 || o.Parallel < 1 {
		return fmt.Errorf("-n and -parallel must be at least 1")
	}
	if o.LogDir == "" {
		dir, err := os.MkdirTemp("", "crifloor-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.LogDir = dir
	}

	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("dial %s: %w", endpoint, err)
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	version, err := rt.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		return fmt.Errorf("CRI version: %w", err)
	}
	if err := floor.CheckImage(ctx, runtimeapi.NewImageServiceClient(conn), o.Image); err != nil {
		return err
	}

	res, err := floor.Measure(ctx, rt, o)
	if err != nil {
		return err
	}
	fmt.Printf("CRI floor: %s %s, %d pods, parallel %d, image %s\n\n",
		version.RuntimeName, version.RuntimeVersion, o.Pods, o.Parallel, o.Image)
	fmt.Print(res.Table())
	return nil
}
