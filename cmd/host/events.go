package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/localapi"
)

func newEventsCommand() *cobra.Command {
	var api apiFlags
	var watch bool
	var forPod string
	cmd := &cobra.Command{
		Use:   "events [--watch] [--for NAMESPACE/NAME]",
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
			out := cmd.OutOrStdout()
			if !watch {
				evs, err := c.Events(cmd.Context(), f)
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, eventsHeader)
				for _, e := range evs {
					printEvent(w, e)
				}
				return w.Flush()
			}
			fmt.Fprintln(out, eventsHeader)
			return c.WatchEvents(cmd.Context(), f, func(e localapi.Event) error {
				printEvent(out, e)
				return nil
			})
		},
	}
	api.register(cmd)
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "keep printing new events")
	cmd.Flags().StringVar(&forPod, "for", "", "only the events of pod NAMESPACE/NAME")
	return cmd
}

const eventsHeader = "LAST SEEN\tTYPE\tREASON\tOBJECT\tCOUNT\tMESSAGE"

func printEvent(w io.Writer, e localapi.Event) {
	obj := e.Object.Kind
	switch {
	case e.Object.Namespace != "":
		obj += "/" + e.Object.Namespace + "/" + e.Object.Name
	case e.Object.Name != "":
		obj += "/" + e.Object.Name
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\n", e.LastTime.Format(time.RFC3339), e.Type, e.Reason, obj, e.Count, oneLine(e.Message))
}
