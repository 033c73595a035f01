package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/localapi"
)

// newObjectsCommand is `podhost configmaps` or `podhost secrets`: the
// ConfigMaps or Secrets of the host's sources (list: their keys and where
// they are defined, never a value), and apply and delete of the local
// API's.
func newObjectsCommand(use, kind, what string, list func(*localapi.Client, context.Context) ([]localapi.ObjectInfo, error)) *cobra.Command {
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
	cmd.AddCommand(ls, newObjectApplyCommand(kind), newObjectDeleteCommand(kind))
	return cmd
}

// newObjectApplyCommand is `podhost configmaps|secrets apply -f FILE`.
func newObjectApplyCommand(kind string) *cobra.Command {
	var api apiFlags
	var file string
	cmd := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Create or replace a " + kind + " of the local API from a manifest (FILE may be - for standard input)",
		Long: "Create or replace the one " + kind + " in FILE (YAML or JSON), kept in the host's state\n" +
			"across restarts, for the pods that are not the API server's. An invalid one is refused\n" +
			"with every field at fault (keys, never values).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, body, err := api.clientWithManifest(cmd, file)
			if err != nil {
				return err
			}
			res, err := c.ApplyObject(cmd.Context(), kind, body)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s/%s %s (keys %s)\n", strings.ToLower(kind), res.Namespace, res.Name, res.Op, orDash(strings.Join(res.Keys, ",")))
			return nil
		},
	}
	api.register(cmd)
	cmd.Flags().StringVarP(&file, "filename", "f", "", strings.ToLower(kind)+" manifest, YAML or JSON; - for standard input")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// newObjectDeleteCommand is `podhost configmaps|secrets delete NS/NAME`.
func newObjectDeleteCommand(kind string) *cobra.Command {
	var api apiFlags
	cmd := &cobra.Command{
		Use:   "delete NAMESPACE/NAME",
		Short: "Delete a " + kind + " of the local API",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, name, err := api.clientFor(args[0])
			if err != nil {
				return err
			}
			if err := c.DeleteObject(cmd.Context(), kind, ns, name); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s/%s deleted\n", strings.ToLower(kind), ns, name)
			return nil
		},
	}
	api.register(cmd)
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
