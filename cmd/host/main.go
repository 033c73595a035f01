// Command host is the podhost node agent and its operator CLI:
//
//	podhost run --config FILE        run the host until SIGTERM or SIGINT
//	podhost validate --config FILE   check a config; every error with its field path
//	podhost plugins list             the running host's plugins
//	podhost version                  the build's version
//
// It only wires packages together: config (host/config), the plugin
// supervisor (host), the local API (host/localapi).
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
