package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/internal/testutil"
)

// TestCLIWatchAndAge runs the CLI's watches against a real host, finding
// it through PODHOST_SOCKET alone: `pods list -w` prints the pod as it
// runs and when it is deleted, `events -w -o json` the pod's events as
// they happen. A static pod's AGE runs from its start.
func TestCLIWatchAndAge(t *testing.T) {
	h := startPodHost(t)
	env := []string{"PODHOST_SOCKET=" + filepath.Join(h.root, "host.sock")}
	pods := h.streamCLI(env, "pods", "list", "-w")
	readLine(t, pods, "NAMESPACE/NAME")
	events := h.streamCLI(env, "events", "-w", "-o", "json", "--for", "default/watched")

	h.apply(busyPod("watched", v1.RestartPolicyAlways, sh("app", `trap "exit 0" TERM; while true; do sleep 1; done`)))
	readLine(t, pods, "default/watched ", "Running", "1/1")
	readLine(t, events, `"reason": "Started"`)

	grace := int64(0)
	h.delete("watched", &grace)
	readLine(t, events, `"reason": "Killing"`)
	readLine(t, pods, "default/watched ", "Deleted")

	name := staticName(t, "aged")
	h.writeManifest("aged.yaml", staticManifest("aged", "hello"))
	h.waitPod(name, 60*time.Second, "running", running)
	<-time.After(2 * time.Second) // for an AGE of at least 1s
	line, out := h.podsListLine("default/"+name, "Running")
	if f := strings.Fields(line); len(f) < 5 || f[4] == "-" {
		t.Errorf("AGE of static pod %s is not set:\n%s", name, out)
	}
}

// cliLines is the standard output of a CLI process, as lines.
type cliLines struct {
	lines  chan string
	stderr *testutil.SyncBuffer
}

// streamCLI starts the host binary with args and env and returns its
// output lines; the process is killed at the end of the test.
func (h *podHost) streamCLI(env []string, args ...string) *cliLines {
	h.t.Helper()
	cmd := exec.CommandContext(h.t.Context(), h.bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	c := &cliLines{lines: make(chan string, 1000), stderr: &testutil.SyncBuffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	return c
}

// readLine reads until a line holds every one of parts; it fails t when
// the output ends or a minute passes first.
func readLine(t *testing.T, c *cliLines, parts ...string) string {
	t.Helper()
	var seen []string
	deadline := time.After(time.Minute)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("output ended before a line with %q:\n%s\nstderr: %s", parts, strings.Join(seen, "\n"), c.stderr.String())
			}
			seen = append(seen, line)
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				return line
			}
		case <-deadline:
			t.Fatalf("no line with %q within a minute:\n%s", parts, strings.Join(seen, "\n"))
		}
	}
}
