// Command host is built as podhost, the node agent and its operator CLI
// (the source stays in cmd/host, the host process; a binary named host
// would shadow /usr/bin/host). `podhost run --config FILE` runs the agent
// until SIGTERM or SIGINT; `podhost validate` checks a config; the other
// verbs (`podhost --help` lists them) talk to a running host over its
// local API.
//
// It only wires packages together: the config (host/config), the plugin
// supervisor (host/supervisor), the running agent (host/node), the local
// API and its client (host/localapi) and systemd readiness (host/sdnotify).
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// exitError carries the exit status a command wants, after it has printed
// what went wrong itself.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "podhost",
		Short:         "podhost node agent: runs pods with out-of-process runtime and volume plugins",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCommand(), newValidateCommand(), newPluginsCommand(), newVersionCommand(),
		newPodsCommand(), newLogsCommand(), newEventsCommand(), newNodeCommand())
	return root
}

func main() {
	err := newRootCommand().Execute()
	var exit exitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		os.Exit(exit.code)
	default:
		fmt.Fprintln(os.Stderr, "host:", err)
		os.Exit(1)
	}
}
