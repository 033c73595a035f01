package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/localapi/localapitest"
	"github.com/podhost/podhost/internal/testutil"
)

func TestCLIPodsListAgeOfManifestPods(t *testing.T) {
	pods, _, sock := apiServer(t)
	it := localapitest.Pod("default", "static", v1.PodRunning, "")
	it.Pod.CreationTimestamp = metav1.Time{}
	started := metav1.NewTime(time.Now().Add(-90 * time.Second))
	it.Pod.Status.StartTime = &started
	pods.Set(it)
	code, stdout, stderr := runCLI(t, nil, "pods", "list", "--socket", sock, "-o", "json")
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, stderr)
	}
	var list []struct {
		Name    string    `json:"name"`
		Created time.Time `json:"created"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("pods list -o json: %v\n%s", err, stdout)
	}
	for _, p := range list {
		if d := p.Created.Sub(started.Time); p.Name == "static" && (d > time.Second || d < -time.Second) {
			t.Errorf("static pod created %v; want its start time %v", p.Created, started.Time)
		}
	}
	_, table, _ := runCLI(t, nil, "pods", "list", "--socket", sock)
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "default/static ") && !strings.Contains(line, "1m") {
			t.Errorf("AGE of a pod that started 90s ago is not 1m…:\n%s", table)
		}
	}
}

func TestCLIConfigView(t *testing.T) {
	path, root := writeConfig(t, "")
	for _, tc := range []struct {
		args  []string
		check func(string) string
	}{
		{[]string{"config", "view", "--config", path}, contains("apiVersion: podhost.dev/v1alpha1", "startTimeout: 10s", "resetAfter: 10m0s",
			"socket: "+root+"/host.sock", "required: true", "shutdownGracePeriod: 30s", "logLevel: debug")},
		{[]string{"config", "view", "--config", path, "-o", "json"}, decodes(json.Unmarshal, `"probeInterval": "10s"`)},
	} {
		code, stdout, stderr := runCLI(t, nil, tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit status %d\n%s", tc.args, code, stderr)
		}
		if problem := tc.check(stdout); problem != "" {
			t.Errorf("%v: %s:\n%s", tc.args, problem, stdout)
		}
	}
	code, _, stderr := runCLI(t, nil, "config", "view", "--config", writeFile(t, "kind: HostConfig\nrootDr: /x\n"))
	if code == 0 || !strings.Contains(stderr, "rootDr") {
		t.Errorf("config view of a bad config: exit status %d\n%s", code, stderr)
	}
}

// readUntil reads lines from sc until one contains want, and returns what
// was read; it fails t after a deadline.
func readUntil(t *testing.T, lines <-chan string, want string) string {
	t.Helper()
	var seen strings.Builder
	deadline := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("output ended before %q:\n%s", want, seen.String())
			}
			seen.WriteString(line + "\n")
			if strings.Contains(line, want) {
				return seen.String()
			}
		case <-deadline:
			t.Fatalf("no %q within 20s:\n%s", want, seen.String())
		}
	}
}

// startCLI starts the CLI as a process and returns its standard output as
// lines; the process is killed at the end of the test.
func startCLI(t *testing.T, args ...string) <-chan string {
	t.Helper()
	cmd := cliCommand(t, nil, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("stderr of %v:\n%s", args, stderr.String())
		}
	})
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

func TestCLIWatch(t *testing.T) {
	pods, events, sock := apiServer(t)
	pods.Set(localapitest.Pod("default", "web", v1.PodPending, ""))

	empty := startCLI(t, "events", "-w", "--socket", sock, "--for", "default/none")
	readUntil(t, empty, "LAST SEEN") // the header comes before any event

	podLines := startCLI(t, "pods", "list", "-w", "--socket", sock)
	readUntil(t, podLines, "default/web")
	waitFor(t, 10*time.Second, func() bool { return pods.Watchers() > 0 }, func() string { return "no pod watcher" })
	pods.SetPhase("default", "web", v1.PodRunning, "")
	readUntil(t, podLines, "Running")

	jsonLines := startCLI(t, "events", "-w", "-o", "json", "--socket", sock)
	readUntil(t, jsonLines, `"reason": "Rejected"`)
	waitFor(t, 10*time.Second, func() bool { return events.Watchers() > 0 }, func() string { return "no event watcher" })
	events.Record("default", "web", "Normal", "Started", "started container app")
	readUntil(t, jsonLines, `"reason": "Started"`)
}

func TestCLIOutputFormats(t *testing.T) {
	_, _, sock := apiServer(t)
	if code, _, stderr := runCLI(t, nil, "pods", "apply", "-f", writeFile(t, cliPod), "--socket", sock); code != 0 {
		t.Fatal(stderr)
	}
	for _, tc := range []struct {
		args []string
		// check looks at stdout.
		check func(stdout string) string
	}{
		{[]string{"pods", "list", "-o", "name"}, lines("default/clash", "default/web")},
		{[]string{"pods", "list", "-o", "wide"}, contains("NAMESPACE/NAME", "UID", "SOURCE", "uid-1", "api")},
		{[]string{"pods", "list", "-o", "json"}, decodes(json.Unmarshal, `"name": "web"`)},
		{[]string{"pods", "list", "-o", "yaml"}, decodes(yamlUnmarshal, "name: web")},
		{[]string{"pods", "get", "default/web", "-o", "table"}, contains("NAMESPACE/NAME", "default/web", "Pending")},
		{[]string{"pods", "get", "default/web", "-o", "name"}, lines("default/web")},
		{[]string{"pods", "get", "default/web", "-o", "json"}, decodes(json.Unmarshal, `"kind": "Pod"`)},
		{[]string{"plugins", "list", "-o", "json"}, decodes(json.Unmarshal, `"name": "rt"`)},
		{[]string{"configmaps", "list"}, contains("NAMESPACE/NAME", "default/cfg", "greeting,mode", "pods/objects.yaml: document 1")},
		{[]string{"secrets", "list", "-o", "wide"}, contains("default/creds", "password", "Opaque", "file")},
		{[]string{"secrets", "list", "-o", "json"}, decodes(json.Unmarshal, `"keys": [`)},
		{[]string{"secrets", "list", "-o", "name"}, lines("default/creds")},
		{[]string{"plugins", "list", "-o", "name"}, lines("rt")},
		{[]string{"plugins", "list", "-o", "wide"}, contains("REQUIRED", "PID", "CAPABILITIES")},
		{[]string{"events", "-o", "yaml"}, decodes(yamlUnmarshal, "reason: Rejected")},
		{[]string{"events", "-o", "wide"}, contains("FIRST SEEN", "Rejected")},
		{[]string{"events", "-o", "name"}, lines("Pod/default/clash")},
		{[]string{"node", "-o", "json"}, decodes(json.Unmarshal, `"hostname": "node1"`)},
		{[]string{"node", "-o", "name"}, lines("node1")},
		{[]string{"node", "-o", "wide"}, contains("HOSTNAME", "node1", "PLATFORM", "GO")},
		{[]string{"version"}, prefix("host dev (go")},
		{[]string{"version", "-o", "name"}, lines("dev")},
		{[]string{"version", "-o", "yaml"}, decodes(yamlUnmarshal, "pluginProtocol: 1")},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := tc.args
			if args[0] != "version" {
				args = append(args, "--socket", sock)
			}
			code, stdout, stderr := runCLI(t, nil, args...)
			if code != 0 {
				t.Fatalf("exit status %d\n%s", code, stderr)
			}
			if problem := tc.check(stdout); problem != "" {
				t.Errorf("%s:\n%s", problem, stdout)
			}
		})
	}
}

func contains(want ...string) func(string) string {
	return func(out string) string {
		for _, w := range want {
			if !strings.Contains(out, w) {
				return "no " + w
			}
		}
		return ""
	}
}

func prefix(want string) func(string) string {
	return func(out string) string {
		if !strings.HasPrefix(out, want) {
			return "does not start with " + want
		}
		return ""
	}
}

// lines wants exactly these lines.
func lines(want ...string) func(string) string {
	return func(out string) string {
		if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "|") != strings.Join(want, "|") {
			return "want lines " + strings.Join(want, ", ")
		}
		return ""
	}
}

// decodes wants output that unmarshal accepts, containing want.
func decodes(unmarshal func([]byte, any) error, want string) func(string) string {
	return func(out string) string {
		var v any
		if err := unmarshal([]byte(out), &v); err != nil {
			return "does not decode: " + err.Error()
		}
		return contains(want)(out)
	}
}

func yamlUnmarshal(b []byte, v any) error { return yaml.Unmarshal(b, v) }

func TestCLIWatchEndedByTheHost(t *testing.T) {
	events := &localapitest.Events{}
	views := localapi.Views{
		Plugins: func() []localapi.PluginInfo { return nil },
		Ready:   func() (bool, string) { return true, "" },
		Events:  events,
	}
	sock := filepath.Join(t.TempDir(), "host.sock")
	s, err := localapi.Listen(sock, views)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	cmd := cliCommand(t, nil, "events", "-w", "--socket", sock)
	var stdout, stderr testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The header is printed before the watch is asked for: wait for the
	// host to hold the watch, or the stop may land before the request (a
	// refused connection, not an ended watch).
	waitFor(t, 10*time.Second, func() bool { return strings.Contains(stdout.String(), "LAST SEEN") && events.Watchers() == 1 }, stdout.String)
	stopped, stop := context.WithCancel(t.Context())
	stop() // at once: the open watch is cut
	_ = s.Shutdown(stopped)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "the host ended the watch") {
		t.Errorf("events -w after the host stopped: %v\nstderr: %s", err, stderr.String())
	}
}
