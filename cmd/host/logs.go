package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/localapi"
)

func newLogsCommand() *cobra.Command {
	var api apiFlags
	var opts localapi.LogOptions
	var tail int64
	var since time.Duration
	var sinceTime string
	cmd := &cobra.Command{
		Use:   "logs NAMESPACE/NAME [-c CONTAINER] [-f] [-p] [--tail N] [--since D | --since-time T] [--timestamps]",
		Short: "Print a container's log",
		Long: "Print the log of a container of a pod, as kubectl logs does: -f follows it until the\n" +
			"container exits, -p reads the previous instance's log (the one before the last restart),\n" +
			"--tail N starts N lines from the end, --since 10m or --since-time RFC3339 leaves older\n" +
			"lines out, --timestamps puts each line's time in front.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, name, err := splitPodName(args[0])
			if err != nil {
				return err
			}
			if tail >= 0 {
				opts.TailLines = &tail
			}
			if cmd.Flags().Changed("since") {
				if since <= 0 {
					return fmt.Errorf("--since %s: must be positive", since)
				}
				secs := int64((since + time.Second - 1) / time.Second)
				opts.SinceSeconds = &secs
			}
			if sinceTime != "" {
				t, err := time.Parse(time.RFC3339Nano, sinceTime)
				if err != nil {
					return fmt.Errorf("--since-time %q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", sinceTime)
				}
				opts.SinceTime = &t
			}
			c, err := api.client()
			if err != nil {
				return err
			}
			return c.Logs(cmd.Context(), ns, name, opts, cmd.OutOrStdout())
		},
	}
	api.register(cmd)
	completePods(cmd, &api, "")
	fl := cmd.Flags()
	fl.StringVarP(&opts.Container, "container", "c", "", "the container (needed when the pod has several)")
	fl.BoolVarP(&opts.Follow, "follow", "f", false, "keep printing new lines until the container exits")
	fl.BoolVarP(&opts.Previous, "previous", "p", false, "the log of the container's previous instance")
	fl.BoolVar(&opts.Timestamps, "timestamps", false, "start each line with its time (RFC3339Nano)")
	fl.Int64Var(&tail, "tail", -1, "only the last N lines (-1: all)")
	fl.DurationVar(&since, "since", 0, "only lines newer than this, such as 5s, 2m or 3h")
	fl.StringVar(&sinceTime, "since-time", "", "only lines written at or after this RFC 3339 time")
	cmd.MarkFlagsMutuallyExclusive("since", "since-time")
	return cmd
}
