package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/localapi"
)

// newObjectsCommand is `podhost configmaps` or `podhost secrets`: the
// ConfigMaps or Secrets of the host's sources, their keys and where they
// are defined, never a value.
func newObjectsCommand(use, what string, list func(*localapi.Client, context.Context) ([]localapi.ObjectInfo, error)) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: "Inspect the " + what + " of the running host's sources (keys, never values)"}
	var api apiFlags
	var out outputFlag
	ls := &cobra.Command{
		Use:   "list",
		Short: "List the " + what + " of the host's sources: namespace/name, keys, where defined",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			objs, err := list(c, cmd.Context())
			if err != nil {
				return err
			}
			return out.printer(cmd.OutOrStdout()).print(nonNil(objs), objectTable(objs))
		},
	}
	api.register(ls)
	out.register(ls, "table", readFormats...)
	cmd.AddCommand(ls)
	return cmd
}

func objectTable(objs []localapi.ObjectInfo) table {
	t := table{header: []string{"NAMESPACE/NAME", "KEYS", "WHERE"}, wideHeader: []string{"TYPE", "SOURCE"}}
	for _, o := range objs {
		name := o.Namespace + "/" + o.Name
		t.rows = append(t.rows, tableRow{
			name:  name,
			cells: []string{name, orDash(strings.Join(o.Keys, ",")), o.Where},
			wide:  []string{orDash(o.Type), o.Source},
		})
	}
	return t
}
