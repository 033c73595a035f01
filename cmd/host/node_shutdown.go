package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func newNodeShutdownCommand() *cobra.Command {
	var api apiFlags
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "shutdown",
		Short: "Shut the node down gracefully: stop every pod within shutdownGracePeriod",
		Long: "Stop every pod that has not finished, each within its own grace period capped by the\n" +
			"config's shutdownGracePeriod, as the kubelet does before the machine powers off. The\n" +
			"pods are not marked Failed: they keep their phase with reason NodeShutdown, and the\n" +
			"host starts them again when it starts again. Until then this host starts no pod.\n" +
			"Run it before powering off or rebooting the node, then stop the host.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			res, err := c.ShutdownNode(ctx)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "node shut down in %s (grace period %ds, boot id %s): %d pods stopped\n",
				res.Finished.Sub(res.Started).Round(time.Millisecond), res.GracePeriodSeconds, orDash(res.BootID), len(res.Pods))
			if len(res.Pods) == 0 {
				return nil
			}
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAMESPACE/NAME\tGRACE\tPHASE KEPT\tERROR")
			failed := 0
			for _, p := range res.Pods {
				if p.Error != "" {
					failed++
				}
				fmt.Fprintf(w, "%s/%s\t%ds\t%s\t%s\n", p.Namespace, p.Name, p.GracePeriodSeconds, orDash(p.Phase), orDash(p.Error))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if failed > 0 {
				return fmt.Errorf("%d pods did not stop in time", failed)
			}
			return nil
		},
	}
	api.register(cmd)
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for the host's answer")
	return cmd
}
