// Command cri-instance starts and stops a private containerd for humans and
// demos, the same instance the tests get from test/crisetup:
//
//	cri-instance up DIR     start it in the background, import the local
//	                        images, print the CRI endpoint
//	cri-instance down DIR   remove every sandbox, stop containerd and its shims
//
// hack/containerd-up.sh and hack/containerd-down.sh wrap it. Run as root
// inside the module.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/podhost/podhost/test/crisetup"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cri-instance:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: cri-instance up|down DIR")
	}
	dir := args[1]
	switch args[0] {
	case "up":
		c, err := crisetup.Start(ctx, dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "containerd %d running in %s (log %s)\n", c.PID(), c.Dir, c.Log)
		fmt.Fprintf(os.Stderr, "ctr:    ctr -a %s -n %s containers ls\n", c.Socket, crisetup.Namespace)
		fmt.Fprintf(os.Stderr, "crictl: crictl --runtime-endpoint %s ps -a\n", c.Endpoint())
		fmt.Println(c.Endpoint())
		return nil
	case "down":
		c, err := crisetup.Open(ctx, dir)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "containerd in %s stopped\n", c.Dir)
		return nil
	}
	return fmt.Errorf("unknown command %q: want up or down", args[0])
}
