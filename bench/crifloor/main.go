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
// a markdown table. Point it at a private containerd that has the local
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
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

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

type options struct {
	endpoint string
	pods     int
	parallel int
	image    string
	grace    time.Duration
	logDir   string
}

func run(ctx context.Context, args []string) error {
	var o options
	fs := flag.NewFlagSet("crifloor", flag.ContinueOnError)
	fs.StringVar(&o.endpoint, "endpoint", "", "CRI `endpoint`, unix:///path/to/containerd.sock (required)")
	fs.IntVar(&o.pods, "n", 20, "number of pods")
	fs.IntVar(&o.parallel, "parallel", 1, "pods in flight at a time in each phase")
	fs.StringVar(&o.image, "image", localimages.BusyboxName, "container image; it must already be in containerd")
	fs.DurationVar(&o.grace, "grace", 5*time.Second, "StopContainer timeout")
	fs.StringVar(&o.logDir, "logs", "", "`dir` for CRI container logs (default: a temporary dir, removed after)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !strings.HasPrefix(o.endpoint, "unix://") {
		return fmt.Errorf("-endpoint must be unix:///path, got %q (start one with hack/containerd-up.sh DIR)", o.endpoint)
	}
	if o.pods < 1 || o.parallel < 1 {
		return fmt.Errorf("-n and -parallel must be at least 1")
	}
	if o.logDir == "" {
		dir, err := os.MkdirTemp("", "crifloor-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.logDir = dir
	}

	conn, err := grpc.NewClient(o.endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("dial %s: %w", o.endpoint, err)
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	version, err := rt.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		return fmt.Errorf("CRI version: %w", err)
	}
	img, err := runtimeapi.NewImageServiceClient(conn).ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: o.image}})
	if err != nil {
		return fmt.Errorf("image status %s: %w", o.image, err)
	}
	if img.GetImage() == nil {
		return fmt.Errorf("image %s is not in containerd (import it; hack/containerd-up.sh does)", o.image)
	}

	res, err := measure(ctx, rt, o)
	if err != nil {
		return err
	}
	fmt.Printf("CRI floor: %s %s, %d pods, parallel %d, image %s\n\n",
		version.RuntimeName, version.RuntimeVersion, o.pods, o.parallel, o.image)
	fmt.Print(res.table())
	return nil
}
