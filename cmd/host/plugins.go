package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/config"
	"github.com/podhost/podhost/host/localapi"
)

// defaultConfigPath is where `podhost plugins list` looks for the socket when
// neither --socket nor --config is given.
const defaultConfigPath = "/etc/podhost/host.yaml"

func newPluginsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "plugins", Short: "Inspect the running host's plugins"}
	var socket, cfgPath string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the running host's plugins: name, kind, version, state, restarts, last error",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sock, err := apiSocket(socket, cfgPath)
			if err != nil {
				return err
			}
			plugins, err := localapi.NewClient(sock).Plugins(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tKIND\tVERSION\tSTATE\tREADY\tRESTARTS\tAGE\tLAST ERROR")
			for _, p := range plugins {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%t\t%d\t%s\t%s\n", p.Name, p.Kind, orDash(p.Version),
					p.State, p.Ready, p.Restarts, age(p.Since), orDash(oneLine(p.LastError)))
			}
			return w.Flush()
		},
	}
	list.Flags().StringVar(&socket, "socket", "", "the host's API socket (default: api.socket of --config)")
	list.Flags().StringVar(&cfgPath, "config", "", "host config, to find the API socket (default "+defaultConfigPath+")")
	cmd.AddCommand(list)
	return cmd
}

// apiSocket finds the local API socket: --socket, else the config's.
func apiSocket(socket, cfgPath string) (string, error) {
	if socket != "" {
		return socket, nil
	}
	if cfgPath == "" {
		cfgPath = defaultConfigPath
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return "", fmt.Errorf("finding the API socket (give --socket or --config): %w", err)
	}
	return filepath.Clean(cfg.API.Socket), nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func age(since time.Time) string {
	if since.IsZero() {
		return "-"
	}
	return time.Since(since).Round(time.Second).String()
}
