package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/localapi"
)

func newPodsDeleteCommand() *cobra.Command {
	var api apiFlags
	var grace int64
	var force, wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "delete NAMESPACE/NAME [--grace-period N] [--force] [--wait]",
		Short: "Delete a pod applied through the API",
		Long: "Delete a pod: its containers get SIGTERM and --grace-period seconds (default: the pod's\n" +
			"terminationGracePeriodSeconds) before they are killed. --force removes the pod from the\n" +
			"desired set at once and kills it without grace. --wait waits until the pod is gone.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, name, err := splitPodName(args[0])
			if err != nil {
				return err
			}
			opts := localapi.DeleteOptions{Force: force}
			if cmd.Flags().Changed("grace-period") {
				if grace < 0 {
					return fmt.Errorf("--grace-period %d: must be >= 0", grace)
				}
				opts.GracePeriod = &grace
			}
			c, err := api.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if wait {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			d, err := c.Delete(ctx, ns, name, opts)
			if err != nil {
				return err
			}
			g := "-"
			if p := d.Pod.DeletionGracePeriodSeconds; p != nil {
				g = fmt.Sprintf("%ds", *p)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pod %s/%s deleted (grace period %s)\n", ns, name, g)
			if !wait {
				return nil
			}
			return waitGone(ctx, c, ns, name, timeout)
		},
	}
	api.register(cmd)
	completePods(cmd, &api, "")
	cmd.Flags().Int64Var(&grace, "grace-period", 0, "seconds the containers get to stop (default: the pod's own)")
	cmd.Flags().BoolVar(&force, "force", false, "remove the pod at once and kill it without grace")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the pod is gone")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "how long --wait waits")
	return cmd
}

// waitGone waits for the pod to disappear from the host.
func waitGone(ctx context.Context, c *localapi.Client, ns, name string, timeout time.Duration) error {
	gone := false
	err := c.WatchPods(ctx, func(ev localapi.PodEvent) error {
		if ev.Summary.Namespace == ns && ev.Summary.Name == name && ev.Type == localapi.Deleted {
			gone = true
			return errDone
		}
		return nil
	})
	if gone {
		return nil
	}
	// The pod may have gone before the watch began.
	if _, getErr := c.Pod(context.WithoutCancel(ctx), ns, name); errors.Is(getErr, localapi.ErrNotFound) {
		return nil
	}
	if ctx.Err() != nil || err == nil {
		return fmt.Errorf("pod %s/%s: still present after %s", ns, name, timeout)
	}
	return fmt.Errorf("watching pod %s/%s: %w", ns, name, err)
}
