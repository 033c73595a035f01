package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/localapi"
)

func newPodsApplyCommand() *cobra.Command {
	var api apiFlags
	var file string
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "apply -f FILE [--wait]",
		Short: "Create or update a pod from a manifest (FILE may be - for standard input)",
		Long: "Create or update the one pod in FILE (YAML or JSON). An invalid pod is refused with\n" +
			"every field at fault. With --wait, print the pod's progress until it runs; exit 1 if it\n" +
			"fails, is rejected or deleted, or --timeout passes.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, body, err := api.clientWithManifest(cmd, file)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if wait {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			res, err := c.Apply(ctx, body)
			if err != nil {
				return err
			}
			s := res.Summary
			fmt.Fprintf(cmd.OutOrStdout(), "pod %s/%s %s (uid %s)\n", s.Namespace, s.Name, res.Op, s.UID)
			if !wait {
				return nil
			}
			return waitRunning(ctx, c, s, cmd.OutOrStdout(), timeout)
		},
	}
	api.register(cmd)
	cmd.Flags().StringVarP(&file, "filename", "f", "", "pod manifest, YAML or JSON; - for standard input")
	_ = cmd.MarkFlagRequired("filename")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the pod runs, printing its progress")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "how long --wait waits")
	return cmd
}

// errDone ends a watch early.
var errDone = errors.New("done")

// waitRunning prints a line whenever the pod's phase, reason or readiness
// changes, until it is Running (or Succeeded). Failed, rejected, deleted
// and a timeout are errors.
func waitRunning(ctx context.Context, c *localapi.Client, want localapi.PodSummary, out io.Writer, timeout time.Duration) error {
	var last string
	var result error
	err := c.WatchPods(ctx, func(ev localapi.PodEvent) error {
		s := ev.Summary
		if s.Namespace != want.Namespace || s.Name != want.Name || (want.UID != "" && s.UID != "" && s.UID != want.UID) {
			return nil
		}
		line := fmt.Sprintf("%s/%s: %s %d/%d ready", s.Namespace, s.Name, s.Phase, s.ReadyContainers, s.Containers)
		if r := podReason(s); r != "" {
			line += " (" + r + ")"
		}
		if line != last && ev.Type != localapi.Deleted {
			fmt.Fprintln(out, line)
			last = line
		}
		switch {
		case ev.Type == localapi.Deleted:
			result = fmt.Errorf("pod %s/%s was deleted while waiting", s.Namespace, s.Name)
		case s.Error != "":
			result = fmt.Errorf("pod %s/%s is rejected: %s", s.Namespace, s.Name, s.Error)
		case s.Phase == "Failed":
			result = fmt.Errorf("pod %s/%s failed: %s", s.Namespace, s.Name, orDash(s.Reason))
		case s.Phase == "Running", s.Phase == "Succeeded":
		default:
			return nil
		}
		return errDone
	})
	switch {
	case errors.Is(err, errDone):
		return result
	case ctx.Err() != nil || err == nil:
		return fmt.Errorf("pod %s/%s: not running after %s (last: %s)", want.Namespace, want.Name, timeout, orDash(last))
	}
	return fmt.Errorf("watching pod %s/%s: %w", want.Namespace, want.Name, err)
}
