package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/podhost/podhost/host/localapi"
)

func newPodsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "pods", Short: "List, inspect, apply and delete the running host's pods"}
	cmd.AddCommand(newPodsListCommand(), newPodsGetCommand(), newPodsApplyCommand(), newPodsDeleteCommand())
	return cmd
}

func newPodsListCommand() *cobra.Command {
	var api apiFlags
	var out outputFlag
	var watch bool
	cmd := &cobra.Command{
		Use:   "list [-w]",
		Short: "List the host's pods: namespace/name, phase, ready, restarts, age, reason",
		Long: "List the host's pods. With -w, list them and then print every change until\n" +
			"interrupted; -o json and yaml then print each change as {type, summary, pod}.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			p := out.printer(cmd.OutOrStdout())
			if watch {
				if err := p.header(podTable()); err != nil {
					return err
				}
				return watchEnded(c.WatchPods(cmd.Context(), func(ev localapi.PodEvent) error {
					s := ev.Summary
					if ev.Type == localapi.Deleted {
						s.Reason, s.Error = "Deleted", ""
					}
					return p.print(ev, podTable(s))
				}))
			}
			pods, err := c.Pods(cmd.Context())
			if err != nil {
				return err
			}
			return p.print(nonNil(pods), podTable(pods...))
		},
	}
	api.register(cmd)
	out.register(cmd, "table", readFormats...)
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "after the list, print every change")
	return cmd
}

func newPodsGetCommand() *cobra.Command {
	var api apiFlags
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "get NAMESPACE/NAME",
		Short: "Print one pod, with its status (YAML unless -o says otherwise)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, name, err := api.clientFor(args[0])
			if err != nil {
				return err
			}
			d, err := c.Pod(cmd.Context(), ns, name)
			if err != nil {
				return err
			}
			pod := d.Pod
			pod.APIVersion, pod.Kind = "v1", "Pod"
			if d.Summary.Error != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "error:", d.Summary.Error)
			}
			return out.printer(cmd.OutOrStdout()).print(pod, podTable(d.Summary))
		},
	}
	api.register(cmd)
	out.register(cmd, "yaml", readFormats...)
	completePods(cmd, &api, "")
	return cmd
}

// watchEnded explains the end of a watch that the host closed.
func watchEnded(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the host ended the watch (did it stop?)")
	}
	return err
}

// splitPodName splits NAMESPACE/NAME.
func splitPodName(arg string) (string, string, error) {
	ns, name, ok := strings.Cut(arg, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("pod %q: want NAMESPACE/NAME", arg)
	}
	return ns, name, nil
}

// readManifest reads FILE, or standard input for "-".
func readManifest(cmd *cobra.Command, file string) ([]byte, error) {
	if file == "-" {
		b, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), localapi.MaxBodySize+1))
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading pod manifest: %w", err)
	}
	return b, nil
}
