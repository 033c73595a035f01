package main

import (
	"github.com/spf13/cobra"
)

func newNodeCommand() *cobra.Command {
	var api apiFlags
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Describe the running host: hostname, version, readiness, plugins, pods",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			n, err := c.Node(cmd.Context())
			if err != nil {
				return err
			}
			return out.printer(cmd.OutOrStdout()).print(n, nodeTable(n))
		},
	}
	api.register(cmd)
	out.register(cmd, "table", readFormats...)
	cmd.AddCommand(newNodeShutdownCommand())
	return cmd
}
