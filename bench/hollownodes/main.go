// Command hollownodes runs many podhost nodes on one machine against one
// real API server, in the spirit of kubemark's hollow nodes: each node is
// a `podhost run` with its own node name, root directory and credentials,
// and the in-memory runtime plugin (examples/runtime-memory) in place of
// containerd. It must run as root inside this module, after
// `make build kube-binaries`:
//
//	go run ./bench/hollownodes [-nodes 50] [-pods 10] [-rest 60s]
//
// It starts etcd and kube-apiserver (test/kubecluster), builds
// runtime-memory, starts the nodes, waits until every Node is Ready with a
// Lease, creates -pods host-network pods bound to each node and waits until
// the API shows them all Running with a pod IP, then leaves everything at
// rest for -rest and measures:
//
//   - the resident memory (VmRSS) of each node's host and plugin process;
//   - the API server's requests in the rest window (apiserver_request_total
//     from its /metrics, before and after), per node per minute;
//   - that every Lease was renewed in the window and every Node stayed
//     Ready.
//
// It prints a markdown table; BENCHMARKS.md keeps the results. A check
// that fails makes the command exit 1. Everything it started is stopped
// and its temporary directory removed, whatever happens.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "hollownodes:", err)
		os.Exit(1)
	}
}

type options struct {
	nodes, pods int
	rest        time.Duration
	hostBin     string
	keep        bool
}

func run(ctx context.Context, args []string) error {
	var o options
	fs := flag.NewFlagSet("hollownodes", flag.ContinueOnError)
	fs.IntVar(&o.nodes, "nodes", 50, "hollow nodes to run")
	fs.IntVar(&o.pods, "pods", 10, "pods per node")
	fs.DurationVar(&o.rest, "rest", time.Minute, "how long to measure at rest")
	fs.StringVar(&o.hostBin, "host", "bin/podhost", "the podhost binary")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.nodes < 1 || o.pods < 0 {
		return fmt.Errorf("-nodes must be at least 1 and -pods at least 0")
	}
	dir, err := os.MkdirTemp("", "hollownodes-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	} else {
		fmt.Fprintln(os.Stderr, "keeping", dir)
	}
	f, err := startFleet(ctx, dir, o)
	if err != nil {
		return err
	}
	defer f.stop()
	res, err := f.measure(ctx, o)
	if err != nil {
		return err
	}
	res.print(os.Stdout, o)
	if len(res.problems) > 0 {
		return fmt.Errorf("%d checks failed", len(res.problems))
	}
	return nil
}
