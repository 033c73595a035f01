package main

import (
	"fmt"

	"github.com/spf13/cobra"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func newTopCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "top", Short: "Show the CPU and memory of pods or the node"}
	cmd.AddCommand(newTopPodsCommand(), newTopNodeCommand())
	return cmd
}

func newTopPodsCommand() *cobra.Command {
	var api apiFlags
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "pods",
		Short: "Show each pod's CPU (millicores) and memory working set, as kubectl top pod",
		Long: "Show each pod's CPU and memory from the host's last reading (gathered every 10 s; the\n" +
			"CPU rate needs two readings). -o json and yaml print the pods' part of the kubelet's\n" +
			"Summary API.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := statsSummary(cmd, &api)
			if err != nil {
				return err
			}
			pods := s.Pods
			if pods == nil {
				pods = []statsapi.PodStats{}
			}
			return out.printer(cmd.OutOrStdout()).print(pods, topPodsTable(pods))
		},
	}
	api.register(cmd)
	out.register(cmd, "table", readFormats...)
	return cmd
}

func newTopNodeCommand() *cobra.Command {
	var api apiFlags
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Show the node's CPU (millicores) and memory working set, as kubectl top node",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := statsSummary(cmd, &api)
			if err != nil {
				return err
			}
			return out.printer(cmd.OutOrStdout()).print(s.Node, topNodeTable(s.Node))
		},
	}
	api.register(cmd)
	out.register(cmd, "table", readFormats...)
	return cmd
}

func statsSummary(cmd *cobra.Command, api *apiFlags) (statsapi.Summary, error) {
	c, err := api.client()
	if err != nil {
		return statsapi.Summary{}, err
	}
	return c.StatsSummary(cmd.Context())
}

func topPodsTable(pods []statsapi.PodStats) table {
	t := table{header: []string{"NAMESPACE/NAME", "CPU(cores)", "MEMORY(bytes)"}}
	for _, p := range pods {
		name := p.PodRef.Namespace + "/" + p.PodRef.Name
		t.rows = append(t.rows, tableRow{name: name, cells: []string{name, cpuCell(p.CPU), memoryCell(p.Memory)}})
	}
	return t
}

func topNodeTable(n statsapi.NodeStats) table {
	return table{
		header: []string{"NAME", "CPU(cores)", "MEMORY(bytes)"},
		rows:   []tableRow{{name: n.NodeName, cells: []string{n.NodeName, cpuCell(n.CPU), memoryCell(n.Memory)}}},
	}
}

// cpuCell is the CPU rate in millicores, rounded up so that a pod that
// ran at all shows; "-" until there is a rate.
func cpuCell(c *statsapi.CPUStats) string {
	if c == nil || c.UsageNanoCores == nil {
		return "-"
	}
	return fmt.Sprintf("%dm", (*c.UsageNanoCores+999_999)/1_000_000)
}

// memoryCell is the working set in MiB, rounded up.
func memoryCell(m *statsapi.MemoryStats) string {
	if m == nil || m.WorkingSetBytes == nil {
		return "-"
	}
	return fmt.Sprintf("%dMi", (*m.WorkingSetBytes+1<<20-1)>>20)
}
