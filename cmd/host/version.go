package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/pluginapi"
)

// versionInfo is what `podhost version -o json|yaml` prints.
type versionInfo struct {
	Version        string `json:"version"`
	GoVersion      string `json:"goVersion"`
	PluginProtocol uint   `json:"pluginProtocol"`
	PluginContract string `json:"pluginContract"`
}

func newVersionCommand() *cobra.Command {
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the host's version and the plugin contract it speaks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := versionInfo{Version: version, GoVersion: runtime.Version(),
				PluginProtocol: pluginapi.ProtocolVersion, PluginContract: pluginapi.ContractVersion}
			line := fmt.Sprintf("host %s (%s, plugin protocol %d, contract %s)", v.Version, v.GoVersion, v.PluginProtocol, v.PluginContract)
			return out.printer(cmd.OutOrStdout()).print(v, table{rows: []tableRow{{name: v.Version, cells: []string{line}}}})
		},
	}
	out.register(cmd, "table", readFormats...)
	return cmd
}
