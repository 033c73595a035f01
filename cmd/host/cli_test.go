package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// cliModeEnv makes the test binary run main() with its arguments: the
// tests below run the CLI as a process, exit status and all.
const cliModeEnv = "PODHOST_CMD_TEST_CLI"

// cliCommand returns the CLI as a process with args; env is added to an
// environment without PODHOST_SOCKET.
func cliCommand(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), self, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, socketEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, cliModeEnv+"=1"), env...)
	return cmd
}

// runCLI runs the CLI as a process and returns its exit status and output.
func runCLI(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := cliCommand(t, env, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("running %v: %v", args, err)
	return 0, "", ""
}

func TestCLIUnknownCommandsAndFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // in stderr
	}{
		{[]string{"pods", "lst"}, []string{`unknown command "lst" for "podhost pods"`, "Did you mean this?", "list", "podhost pods --help"}},
		{[]string{"lgs"}, []string{`unknown command "lgs" for "podhost"`, "logs"}},
		{[]string{"node", "shutdwn"}, []string{`unknown command "shutdwn" for "podhost node"`, "shutdown"}},
		{[]string{"plugins", "lis"}, []string{`unknown command "lis"`, "list"}},
		{[]string{"completion", "bsh"}, []string{`unknown command "bsh"`, "bash"}},
		{[]string{"help", "pods", "lst"}, []string{`unknown command "lst" for "podhost pods"`, "list"}},
		{[]string{"pods", "list", "--wach"}, []string{"unknown flag: --wach", "--watch", "podhost pods list --help"}},
		{[]string{"logs", "default/web", "--tial", "3"}, []string{"unknown flag: --tial", "--tail"}},
		{[]string{"pods", "list", "-o", "xml"}, []string{`-o "xml"`, "table, wide, json, yaml, name"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, tc.args...)
			if code == 0 {
				t.Fatalf("exit status 0; want non-zero\nstdout: %s\nstderr: %s", stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// verbs lists the command path of every command under root.
func verbs(root *cobra.Command) []string {
	var out []string
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		out = append(out, strings.TrimPrefix(c.CommandPath(), "podhost "))
		out = append(out, verbs(c)...)
	}
	return out
}

func TestCLIHelpListsEveryVerb(t *testing.T) {
	root := newRootCommand()
	all := verbs(root)
	for _, want := range []string{"pods list", "pods get", "node shutdown", "config view", "completion bash", "plugins list"} {
		if !strings.Contains(strings.Join(all, "\n"), want) {
			t.Fatalf("the command tree has no %q: %v", want, all)
		}
	}
	code, stdout, stderr := runCLI(t, nil, "--help")
	if code != 0 {
		t.Fatalf("--help: exit status %d\n%s", code, stderr)
	}
	for _, v := range all {
		if !strings.Contains(stdout, "  "+v+" ") {
			t.Errorf("podhost --help does not list %q:\n%s", v, stdout)
		}
	}
}

// localCommands are the commands that do not talk to a running host.
var localCommands = map[string]bool{
	"podhost run": true, "podhost validate": true, "podhost version": true, "podhost config view": true,
	"podhost completion bash": true, "podhost completion zsh": true, "podhost completion fish": true,
	"podhost completion powershell": true, "podhost help": true,
}

func TestCLIConnectionFlagsEverywhere(t *testing.T) {
	checked := 0
	walkCommands(newRootCommand(), func(cmd *cobra.Command) {
		if !cmd.Runnable() || cmd.Annotations[groupAnnotation] != "" || localCommands[cmd.CommandPath()] {
			return
		}
		checked++
		for _, f := range []string{"socket", "server", "token-file", "config"} {
			if cmd.Flags().Lookup(f) == nil {
				t.Errorf("%s has no --%s", cmd.CommandPath(), f)
			}
		}
	})
	if checked < 9 {
		t.Errorf("checked only %d commands", checked)
	}
}

func TestCLISocketEnvironment(t *testing.T) {
	_, _, sock := apiServer(t)
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want int
	}{
		{"plugins list from " + socketEnv, []string{socketEnv + "=" + sock}, []string{"plugins", "list"}, 0},
		{"pods list from " + socketEnv, []string{socketEnv + "=" + sock}, []string{"pods", "list"}, 0},
		{"--socket wins over " + socketEnv, []string{socketEnv + "=/nonexistent.sock"}, []string{"node", "--socket", sock}, 0},
		{"a bad " + socketEnv + " fails", []string{socketEnv + "=/nonexistent.sock"}, []string{"plugins", "list"}, 1},
		{"plugins list takes --server", nil, []string{"plugins", "list", "--server", "127.0.0.1:1"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.env, tc.args...)
			if code != tc.want {
				t.Fatalf("exit status %d; want %d\nstdout: %s\nstderr: %s", code, tc.want, stdout, stderr)
			}
			if code == 1 && strings.Contains(stderr, "unknown flag") {
				t.Errorf("flag refused:\n%s", stderr)
			}
		})
	}
}

func TestCLICompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := runCLI(t, nil, "completion", shell)
		if code != 0 || !strings.Contains(stdout, "podhost") {
			t.Errorf("completion %s: exit status %d, %d bytes\n%s", shell, code, len(stdout), stderr)
		}
	}
	// What the scripts ask: cobra's hidden __complete command.
	_, _, sock := apiServer(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"pods", ""}, []string{"apply", "delete", "get", "list"}},
		{[]string{"pods", "list", "-o", ""}, []string{"table", "wide", "json", "yaml", "name"}},
		{[]string{"pods", "get", "--socket", sock, "default/c"}, []string{"default/clash\tRejected"}},
		{[]string{"logs", "--socket", sock, ""}, []string{"default/clash"}},
		{[]string{"events", "--socket", sock, "--for", ""}, []string{"default/clash"}},
	} {
		code, stdout, stderr := runCLI(t, nil, append([]string{"__complete"}, tc.args...)...)
		for _, w := range tc.want {
			if code != 0 || !strings.Contains(stdout, w+"\n") && !strings.Contains(stdout, w+"\t") {
				t.Errorf("__complete %v: exit status %d, no %q:\n%s%s", tc.args, code, w, stdout, stderr)
			}
		}
	}
}
