// Command host is built as podhost, the node agent and its operator CLI
// (the source stays in cmd/host, the host process; a binary named host
// would shadow /usr/bin/host). `podhost run --config FILE` runs the agent
// until SIGTERM or SIGINT; `podhost --help` lists every other command. The
// read commands share one printer (-o table|wide|json|yaml|name) and the
// commands that talk to a running host share one set of connection flags
// (--socket, --config, --server, --token-file, and PODHOST_SOCKET).
//
// It only wires packages together: the config (host/config), the plugin
// supervisor (host/supervisor), the running agent (host/node), the local
// API and its client (host/localapi) and systemd readiness (host/sdnotify).
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/localapi"
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
	root.AddCommand(newRunCommand(), newValidateCommand(), newConfigCommand(), newPluginsCommand(), newVersionCommand(),
		newPodsCommand(), newLogsCommand(), newExecCommand(), newAttachCommand(), newPortForwardCommand(), newTopCommand(),
		newEventsCommand(), newNodeCommand(),
		newObjectsCommand("configmaps", "ConfigMap", "ConfigMaps", (*localapi.Client).ConfigMaps),
		newObjectsCommand("secrets", "Secret", "Secrets", (*localapi.Client).Secrets))
	root.InitDefaultCompletionCmd()
	root.Long = root.Short + "\n\nEvery command:\n" + everyVerb(root)
	strictCommands(root)
	return root
}

// everyVerb lists every runnable command under root with its summary, so
// that `podhost --help` shows the whole CLI at once.
func everyVerb(root *cobra.Command) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	walkCommands(root, func(c *cobra.Command) {
		if c == root || !c.Runnable() || c.Hidden || c.Name() == "help" {
			return
		}
		fmt.Fprintf(w, "  %s \t%s\n", strings.TrimPrefix(c.CommandPath(), root.Name()+" "), c.Short)
	})
	_ = w.Flush()
	return b.String()
}

func main() {
	err := newRootCommand().Execute()
	var exit exitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		os.Exit(exit.code)
	default:
		fmt.Fprintln(os.Stderr, "podhost:", err)
		os.Exit(1)
	}
}
