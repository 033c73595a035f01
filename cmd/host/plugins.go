package main

import (
	"github.com/spf13/cobra"
)

func newPluginsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "plugins", Short: "Inspect the running host's plugins"}
	var api apiFlags
	var out outputFlag
	list := &cobra.Command{
		Use:   "list",
		Short: "List the running host's plugins: name, kind, version, state, restarts, last error",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			plugins, err := c.Plugins(cmd.Context())
			if err != nil {
				return err
			}
			return out.printer(cmd.OutOrStdout()).print(nonNil(plugins), pluginTable(plugins))
		},
	}
	api.register(list)
	out.register(list, "table", readFormats...)
	cmd.AddCommand(list)
	return cmd
}

// nonNil makes an empty list print as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
