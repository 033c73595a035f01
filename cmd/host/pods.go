package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/podhost/podhost/host/localapi"
)

func newPodsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "pods", Short: "List, inspect, apply and delete the running host's pods"}
	cmd.AddCommand(newPodsListCommand(), newPodsGetCommand(), newPodsApplyCommand(), newPodsDeleteCommand())
	return cmd
}

func newPodsListCommand() *cobra.Command {
	var api apiFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the host's pods: namespace/name, phase, ready, restarts, age, reason",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			pods, err := c.Pods(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAMESPACE/NAME\tPHASE\tREADY\tRESTARTS\tAGE\tREASON")
			for _, p := range pods {
				fmt.Fprintf(w, "%s/%s\t%s\t%d/%d\t%d\t%s\t%s\n", p.Namespace, p.Name, p.Phase,
					p.ReadyContainers, p.Containers, p.Restarts, age(p.Created), orDash(podReason(p)))
			}
			return w.Flush()
		},
	}
	api.register(cmd)
	return cmd
}

// podReason is the REASON column: the pod's error first, for it is why the
// pod does not run as written.
func podReason(p localapi.PodSummary) string {
	if p.Error != "" {
		return oneLine(p.Error)
	}
	return p.Reason
}

func newPodsGetCommand() *cobra.Command {
	var api apiFlags
	var output string
	cmd := &cobra.Command{
		Use:   "get NAMESPACE/NAME",
		Short: "Print one pod, with its status, as YAML or JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, name, err := splitPodName(args[0])
			if err != nil {
				return err
			}
			if output != "yaml" && output != "json" {
				return fmt.Errorf("-o %q: want yaml or json", output)
			}
			c, err := api.client()
			if err != nil {
				return err
			}
			d, err := c.Pod(cmd.Context(), ns, name)
			if err != nil {
				return err
			}
			pod := d.Pod
			pod.APIVersion, pod.Kind = "v1", "Pod"
			var out []byte
			if output == "json" {
				out, err = json.MarshalIndent(pod, "", "  ")
				out = append(out, '\n')
			} else {
				out, err = yaml.Marshal(pod)
			}
			if err != nil {
				return fmt.Errorf("encoding pod: %w", err)
			}
			if d.Summary.Error != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "error:", d.Summary.Error)
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	api.register(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	return cmd
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
