package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/localapi/localapitest"
	"github.com/podhost/podhost/host/streamproxy/streamproxytest"
)

// streamServer serves default/web with streams to a CRI streaming server
// whose commands echo stdin, write "err" and exit 3, and stats of one
// reading; it returns the socket.
func streamServer(t *testing.T) string {
	t.Helper()
	pods := localapitest.NewPods()
	pods.Set(localapitest.Pod("default", "web", "Running", ""))
	cpu, mem := uint64(250_000_000), uint64(64<<20)
	summary := statsapi.Summary{
		Node: statsapi.NodeStats{NodeName: "node1", CPU: &statsapi.CPUStats{UsageNanoCores: &cpu}, Memory: &statsapi.MemoryStats{WorkingSetBytes: &mem}},
		Pods: []statsapi.PodStats{{PodRef: statsapi.PodReference{Namespace: "default", Name: "web"},
			CPU: &statsapi.CPUStats{UsageNanoCores: &cpu}, Memory: &statsapi.MemoryStats{WorkingSetBytes: &mem}}},
	}
	views := localapi.Views{
		Plugins: func() []localapi.PluginInfo { return nil },
		Ready:   func() (bool, string) { return true, "" },
		Pods:    pods,
		Streams: streamproxytest.Start(t, &streamproxytest.EchoRuntime{}),
		Stats:   func() (statsapi.Summary, error) { return summary, nil },
	}
	sock := filepath.Join(t.TempDir(), "host.sock")
	s, err := localapi.Listen(sock, views)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown(context.WithoutCancel(t.Context())) })
	return sock
}

// TestCLIExecAndTop runs the CLI as a process: exec's exit status is the
// command's, with stdout and stderr apart and stdin passed with -i; a
// command must follow "--"; top prints kubectl's columns.
func TestCLIExecAndTop(t *testing.T) {
	sock := streamServer(t)
	cmd := cliCommand(t, nil, "exec", "-i", "default/web", "--socket", sock, "--", "cat")
	cmd.Stdin = strings.NewReader("in\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 3 || stdout.String() != "in\n" || stderr.String() != "err\n" {
		t.Errorf("exec -i: exit status %d (%v), stdout %q, stderr %q; want 3, \"in\\n\", \"err\\n\"", code, err, stdout.String(), stderr.String())
	}
	if code, _, errOut := runCLI(t, nil, "exec", "default/web", "--socket", sock, "cat"); code != 1 || !strings.Contains(errOut, "then -- and the command") {
		t.Errorf("exec without --: exit status %d, %q; want 1 and how to write it", code, errOut)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"top", "pods"}, "NAMESPACE/NAME  CPU(cores)  MEMORY(bytes)\ndefault/web     250m        64Mi\n"},
		{[]string{"top", "node"}, "NAME   CPU(cores)  MEMORY(bytes)\nnode1  250m        64Mi\n"},
	} {
		code, out, errOut := runCLI(t, nil, append(tc.args, "--socket", sock)...)
		if code != 0 || out != tc.want {
			t.Errorf("%s: exit status %d, %q %q; want %q", strings.Join(tc.args, " "), code, out, errOut, tc.want)
		}
	}
}
