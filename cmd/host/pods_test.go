package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/localapi/localapitest"
)

const cliPod = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: app, image: "busybox:1"}]
`

// apiServer serves fakes on a real unix socket and returns them with the
// socket path; default/clash is rejected by a conflict.
func apiServer(t *testing.T) (*localapitest.Pods, *localapitest.Events, string) {
	t.Helper()
	pods := localapitest.NewPods()
	pods.Set(localapitest.Pod("default", "clash", "", "pods/clash.yaml: document 1: name claimed by another source\nsecond line"))
	events := &localapitest.Events{}
	events.Record("default", "clash", "Warning", "Rejected", "name claimed by another source")
	views := localapi.Views{
		Plugins: func() []localapi.PluginInfo { return []localapi.PluginInfo{{Name: "rt", Ready: true}} },
		Ready:   func() (bool, string) { return true, "" },
		Pods:    pods, Events: events, Metrics: prometheus.NewRegistry(),
		ConfigMaps: func() []localapi.ObjectInfo {
			return []localapi.ObjectInfo{{Namespace: "default", Name: "cfg", Keys: []string{"greeting", "mode"}, Source: "file", Where: "pods/objects.yaml: document 1"}}
		},
		Secrets: func() []localapi.ObjectInfo {
			return []localapi.ObjectInfo{{Namespace: "default", Name: "creds", Keys: []string{"password"}, Type: "Opaque", Source: "file", Where: "pods/objects.yaml: document 2"}}
		},
		Node: func(context.Context) localapi.NodeInfo {
			return localapi.NodeInfo{Hostname: "node1", HostVersion: "v1.2.3"}
		},
	}
	sock := filepath.Join(t.TempDir(), "host.sock")
	s, err := localapi.Listen(sock, views)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown(context.WithoutCancel(t.Context())) })
	return pods, events, sock
}

// executeIn is execute with standard input.
func executeIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := newRootCommand()
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	err := cmd.ExecuteContext(t.Context())
	var exit exitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.code, stdout.String(), stderr.String()
	}
	return 1, stdout.String(), stderr.String() + err.Error()
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPodsCommands(t *testing.T) {
	pods, _, sock := apiServer(t)
	file := writeFile(t, cliPod)
	invalid := writeFile(t, strings.Replace(strings.Replace(cliPod, "name: web", "name: Bad_Name", 1), `image: "busybox:1"`, `image: ""`, 1))
	tests := []struct {
		name     string
		stdin    string
		args     []string
		wantCode int
		want     []string // in stdout+stderr
		notWant  []string
	}{
		{"apply from a file", "", []string{"pods", "apply", "-f", file}, 0, []string{"pod default/web created (uid uid-1)"}, nil},
		{"apply again is unchanged", "", []string{"pods", "apply", "-f", file}, 0, []string{"pod default/web unchanged"}, nil},
		{"apply from stdin", strings.Replace(cliPod, "name: web", "name: db", 1), []string{"pods", "apply", "-f", "-"}, 0, []string{"pod default/db created"}, nil},
		{"apply invalid names the fields", "", []string{"pods", "apply", "-f", invalid}, 1, []string{"metadata.name", "spec.containers[0].image: Required value"}, nil},
		{"list", "", []string{"pods", "list"}, 0, []string{"NAMESPACE/NAME", "PHASE", "REASON", "default/web", "Pending", "0/1",
			"default/clash", "Rejected", "pods/clash.yaml: document 1: name claimed by another source"}, []string{"second line"}},
		{"get yaml", "", []string{"pods", "get", "default/web"}, 0, []string{"kind: Pod", "uid: uid-1", "image: busybox:1"}, nil},
		{"get json", "", []string{"pods", "get", "default/web", "-o", "json"}, 0, []string{`"kind": "Pod"`, `"uid": "uid-1"`}, nil},
		{"get bad format", "", []string{"pods", "get", "default/web", "-o", "xml"}, 1, []string{"want one of table, wide, json, yaml, name"}, nil},
		{"get bad name", "", []string{"pods", "get", "web"}, 1, []string{"want NAMESPACE/NAME"}, nil},
		{"get missing", "", []string{"pods", "get", "default/nope"}, 1, []string{"not found"}, nil},
		{"delete with grace", "", []string{"pods", "delete", "default/db", "--grace-period", "5"}, 0, []string{"pod default/db deleted (grace period 5s)"}, nil},
		{"delete missing", "", []string{"pods", "delete", "default/nope"}, 1, []string{"not found"}, nil},
		{"delete negative grace", "", []string{"pods", "delete", "default/web", "--grace-period", "-2"}, 1, []string{"must be >= 0"}, nil},
		{"node", "", []string{"node"}, 0, []string{"HOSTNAME", "PLUGINS", "node1", "v1.2.3", "1/1"}, nil},
		{"events", "", []string{"events"}, 0, []string{"Rejected", "Pod/default/clash"}, nil},
		{"events for another pod", "", []string{"events", "--for", "default/web"}, 0, []string{"LAST SEEN"}, []string{"Rejected"}},
		{"server without token file", "", []string{"pods", "list", "--server", "127.0.0.1:1"}, 1, []string{"token-file"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if !strings.Contains(strings.Join(args, " "), "--server") {
				args = append(args, "--socket", sock)
			}
			code, stdout, stderr := executeIn(t, tt.stdin, args...)
			out := stdout + stderr
			if code != tt.wantCode {
				t.Fatalf("exit code %d; want %d\n%s", code, tt.wantCode, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not contain %q:\n%s", w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output contains %q:\n%s", w, out)
				}
			}
		})
	}
	if it, err := pods.Get(t.Context(), "default", "db"); err != nil || it.Pod.DeletionTimestamp == nil {
		t.Errorf("default/db after delete: %+v, %v; want marked for deletion", it, err)
	}
}

func TestPodsApplyWait(t *testing.T) {
	tests := []struct {
		name     string
		steps    func(p *localapitest.Pods)
		timeout  string
		wantCode int
		want     []string
	}{
		{"progress until running", func(p *localapitest.Pods) {
			p.SetPhase("default", "web", v1.PodPending, "ContainerCreating")
			p.SetPhase("default", "web", v1.PodRunning, "")
		}, "30s", 0, []string{"default/web: Pending 0/1 ready (ContainerCreating)", "default/web: Running 1/1 ready"}},
		{"failed exits non-zero", func(p *localapitest.Pods) {
			p.SetPhase("default", "web", v1.PodFailed, "")
		}, "30s", 1, []string{"default/web: Failed", "failed"}},
		{"deleted exits non-zero", func(p *localapitest.Pods) {
			p.Remove("default", "web")
		}, "30s", 1, []string{"deleted while waiting"}},
		{"timeout exits non-zero", func(*localapitest.Pods) {}, "300ms", 1, []string{"not running after 300ms", "last: default/web: Pending"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods, _, sock := apiServer(t)
			go func() {
				deadline := time.Now().Add(10 * time.Second)
				// Step only once the stream has listed: a change made between
				// its subscribe and its list would show up in the listed state
				// and skip the progress line the test looks for.
				for !pods.WatchListed() && time.Now().Before(deadline) {
					<-time.After(5 * time.Millisecond)
				}
				tt.steps(pods)
			}()
			code, stdout, stderr := executeIn(t, "", "pods", "apply", "-f", writeFile(t, cliPod), "--wait", "--timeout", tt.timeout, "--socket", sock)
			out := stdout + stderr
			if code != tt.wantCode {
				t.Fatalf("exit code %d; want %d\n%s", code, tt.wantCode, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not contain %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestPodsDeleteForceWait(t *testing.T) {
	_, _, sock := apiServer(t)
	if code, _, stderr := executeIn(t, "", "pods", "apply", "-f", writeFile(t, cliPod), "--socket", sock); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr := executeIn(t, "", "pods", "delete", "default/web", "--force", "--wait", "--timeout", "10s", "--socket", sock)
	if code != 0 || !strings.Contains(stdout, "grace period 0s") {
		t.Fatalf("delete --force --wait: code %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = executeIn(t, "", "pods", "list", "--socket", sock)
	if code != 0 || strings.Contains(stdout, "default/web") {
		t.Errorf("pod still listed after a forced delete:\n%s", stdout)
	}
}

func TestLogsCommand(t *testing.T) {
	pods, _, sock := apiServer(t)
	pods.Set(localapitest.Pod("default", "web", v1.PodRunning, ""))
	pods.SetLogs("default", "web", "app", "a\nb\nc\n")
	for _, tc := range []struct {
		args     []string
		wantCode int
		want     string
	}{
		{[]string{"logs", "default/web", "-c", "app"}, 0, "a\nb\nc\n"},
		{[]string{"logs", "default/web", "-c", "app", "--tail", "2"}, 0, "b\nc\n"},
		{[]string{"logs", "default/web", "-c", "nope"}, 1, `no container "nope"`},
		{[]string{"logs", "default/web", "-c", "app", "--since", "-5s"}, 1, "--since -5s: must be positive"},
		{[]string{"logs", "default/web", "-c", "app", "--since-time", "yesterday"}, 1, `--since-time "yesterday": want an RFC 3339 time`},
		{[]string{"logs", "default/web", "-c", "app", "--since", "5s", "--since-time", "2026-01-02T15:04:05Z"}, 1, "[since since-time] were all set"},
	} {
		code, stdout, stderr := executeIn(t, "", append(tc.args, "--socket", sock)...)
		if code != tc.wantCode || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("%v: code %d, output %q; want %d and %q", tc.args, code, stdout+stderr, tc.wantCode, tc.want)
		}
	}
}

func TestCommandsOverTCP(t *testing.T) {
	pods := localapitest.NewPods()
	pods.Set(localapitest.Pod("default", "web", v1.PodRunning, ""))
	views := localapi.Views{
		Plugins: func() []localapi.PluginInfo { return nil },
		Ready:   func() (bool, string) { return true, "" },
		Pods:    pods,
	}
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := localapi.ListenTCP("127.0.0.1:0", tokenFile, views)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown(context.WithoutCancel(t.Context())) })

	code, stdout, stderr := executeIn(t, "", "pods", "list", "--server", "http://"+s.Addr().String(), "--token-file", tokenFile)
	if code != 0 || !strings.Contains(stdout, "default/web") {
		t.Errorf("pods list over TCP: code %d\n%s%s", code, stdout, stderr)
	}
	wrong := filepath.Join(dir, "wrong")
	if err := os.WriteFile(wrong, []byte("nope"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = executeIn(t, "", "pods", "list", "--server", s.Addr().String(), "--token-file", wrong)
	if code == 0 || !strings.Contains(stderr, "unauthorized") {
		t.Errorf("pods list with a wrong token: code %d\n%s%s", code, stdout, stderr)
	}
}
