package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/pluginapi"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the host's version and the plugin contract it speaks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "host %s (%s, plugin protocol %d, contract %s)\n",
				version, runtime.Version(), pluginapi.ProtocolVersion, pluginapi.ContractVersion)
			return nil
		},
	}
}
