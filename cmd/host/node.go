package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func newNodeCommand() *cobra.Command {
	var api apiFlags
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
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			ready := "yes"
			if !n.Ready {
				ready = "no: " + n.NotReady
			}
			plugins := fmt.Sprintf("%d/%d ready", n.Plugins.Ready, n.Plugins.Total)
			if len(n.Plugins.NotReady) > 0 {
				plugins += " (not ready: " + strings.Join(n.Plugins.NotReady, ", ") + ")"
			}
			fmt.Fprintf(w, "Hostname:\t%s\n", n.Hostname)
			fmt.Fprintf(w, "Host version:\t%s\n", orDash(n.HostVersion))
			fmt.Fprintf(w, "Platform:\t%s/%s, %s\n", n.OS, n.Arch, n.GoVersion)
			fmt.Fprintf(w, "Up:\t%s\n", age(n.Started))
			fmt.Fprintf(w, "Ready:\t%s\n", ready)
			fmt.Fprintf(w, "Plugins:\t%s\n", plugins)
			fmt.Fprintf(w, "Pods:\t%d\n", n.Pods)
			return w.Flush()
		},
	}
	api.register(cmd)
	cmd.AddCommand(newNodeShutdownCommand())
	return cmd
}
