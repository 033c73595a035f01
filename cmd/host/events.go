package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/localapi"
)

func newEventsCommand() *cobra.Command {
	var api apiFlags
	var out outputFlag
	var watch bool
	var forPod string
	cmd := &cobra.Command{
		Use:   "events [-w] [--for NAMESPACE/NAME]",
		Short: "Print the host's events: pods, plugins, the node",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var f localapi.EventFilter
			if forPod != "" {
				ns, name, err := splitPodName(forPod)
				if err != nil {
					return fmt.Errorf("--for: %w", err)
				}
				f = localapi.EventFilter{Kind: "Pod", Namespace: ns, Name: name}
			}
			c, err := api.client()
			if err != nil {
				return err
			}
			p := out.printer(cmd.OutOrStdout())
			if watch {
				if err := p.header(eventTable()); err != nil {
					return err
				}
				return watchEnded(c.WatchEvents(cmd.Context(), f, func(e localapi.Event) error {
					return p.print(e, eventTable(e))
				}))
			}
			evs, err := c.Events(cmd.Context(), f)
			if err != nil {
				return err
			}
			return p.print(nonNil(evs), eventTable(evs...))
		},
	}
	api.register(cmd)
	out.register(cmd, "table", readFormats...)
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "keep printing new events")
	cmd.Flags().StringVar(&forPod, "for", "", "only the events of pod NAMESPACE/NAME")
	completePods(cmd, &api, "for")
	return cmd
}
