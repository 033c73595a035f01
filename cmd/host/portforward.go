package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func newPortForwardCommand() *cobra.Command {
	var api apiFlags
	var addresses []string
	cmd := &cobra.Command{
		Use:   "port-forward NAMESPACE/NAME [LOCAL:]REMOTE [...]",
		Short: "Forward local ports to a pod",
		Long: "Listen on local ports and forward every connection to a port of the pod, as kubectl\n" +
			"port-forward does, until interrupted: 8080:80 listens on 8080 for the pod's 80, 80 on\n" +
			"80, :80 on a free port (printed). --address chooses where to listen (default localhost).",
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, name, err := api.clientFor(args[0])
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return c.PortForward(ctx, ns, name, addresses, args[1:], nil, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	api.register(cmd)
	completePods(cmd, &api, "")
	cmd.Flags().StringSliceVar(&addresses, "address", []string{"localhost"}, "addresses to listen on, comma-separated (localhost, 127.0.0.1, ::1, an IP)")
	return cmd
}
