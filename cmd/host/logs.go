package main

import (
	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/localapi"
)

func newLogsCommand() *cobra.Command {
	var api apiFlags
	var container string
	var follow bool
	var tail int64
	cmd := &cobra.Command{
		Use:   "logs NAMESPACE/NAME [-c CONTAINER] [--follow]",
		Short: "Print a container's log",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, name, err := splitPodName(args[0])
			if err != nil {
				return err
			}
			c, err := api.client()
			if err != nil {
				return err
			}
			opts := localapi.LogOptions{Container: container, Follow: follow}
			if cmd.Flags().Changed("tail") && tail >= 0 {
				opts.TailLines = &tail
			}
			return c.Logs(cmd.Context(), ns, name, opts, cmd.OutOrStdout())
		},
	}
	api.register(cmd)
	cmd.Flags().StringVarP(&container, "container", "c", "", "the container (needed when the pod has several)")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new lines")
	cmd.Flags().Int64Var(&tail, "tail", -1, "only the last N lines")
	return cmd
}
