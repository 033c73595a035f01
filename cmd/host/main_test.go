package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/podhost/podhost/host/config"
	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/internal/testutil"
	"github.com/podhost/podhost/pluginapi"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/sdk"
)

// pluginModeEnv makes the test binary serve a test runtime plugin instead of
// running the tests: the host under test launches it as its plugin.
const pluginModeEnv = "PODHOST_CMD_TEST_PLUGIN"

func TestMain(m *testing.M) {
	if os.Getenv(pluginModeEnv) != "" {
		sdk.Serve(sdk.Plugin{
			Name:    "test-runtime",
			Version: "0.0.1",
			Kind:    pluginapi.KindRuntime,
			Runtime: runtimev1.UnimplementedRuntimeServer{},
			Configure: func(_ context.Context, raw json.RawMessage) []sdk.FieldError {
				var c struct{ Reject bool }
				if err := json.Unmarshal(raw, &c); err != nil || c.Reject {
					return []sdk.FieldError{{Field: "reject", Message: "rejected on purpose"}}
				}
				return nil
			},
		})
		return
	}
	if os.Getenv(cliModeEnv) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// execute runs the CLI in process and returns its exit code and output.
func execute(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	// Synchronised: go-plugin's log goroutines can still write to stderr
	// after the command has returned.
	var stdout, stderr testutil.SyncBuffer
	cmd := newRootCommand()
	cmd.SetArgs(args)
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	err := cmd.ExecuteContext(ctx)
	var exit exitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.code, stdout.String(), stderr.String()
	default:
		return 1, stdout.String(), stderr.String() + err.Error()
	}
}

// writeConfig writes a host config whose single runtime plugin is this test
// binary, re-executed in plugin mode, and returns its path.
func writeConfig(t *testing.T, pluginExtra string) (path, root string) {
	t.Helper()
	dir := t.TempDir()
	root = filepath.Join(dir, "root")
	// The host bind-mounts its root dir to make it shared
	// (hostvolumes.MakeRShared); undone before the directory goes.
	t.Cleanup(func() { _ = syscall.Unmount(root, syscall.MNT_DETACH) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	doc := fmt.Sprintf(`apiVersion: podhost.dev/v1alpha1
kind: HostConfig
rootDir: %s
pluginDir: %s
logLevel: debug
supervision:
  restartBackoff: {initial: 50ms, max: 200ms}
plugins:
  - name: rt
    kind: runtime
    path: %s
%s`, root, filepath.Dir(self), filepath.Base(self), pluginExtra)
	path = filepath.Join(dir, "host.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, root
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		extra    string
		wantCode int
		want     []string
	}{
		{name: "valid", wantCode: 0, want: []string{"valid"}},
		{name: "misspelt field", extra: "    pth: x\n", wantCode: 1, want: []string{"plugins[0].pth", "unknown field"}},
		{name: "wrong type", extra: "    required: [1]\n", wantCode: 1, want: []string{"plugins[0].required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, _ := writeConfig(t, tc.extra)
			code, stdout, stderr := execute(t, t.Context(), "validate", "--config", path)
			if code != tc.wantCode {
				t.Fatalf("exit code = %d; want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout+stderr, w) {
					t.Errorf("output does not mention %q:\nstdout: %s\nstderr: %s", w, stdout, stderr)
				}
			}
		})
	}
}

func TestRunRefusesRequiredPlugin(t *testing.T) {
	t.Setenv(pluginModeEnv, "1")
	path, _ := writeConfig(t, "    config: {reject: true}\n")
	code, _, stderr := execute(t, t.Context(), "run", "--config", path)
	if code != 1 {
		t.Fatalf("exit code = %d; want 1 when the required plugin is refused\nstderr: %s", code, stderr)
	}
	for _, w := range []string{`required plugins refused`, `plugin \"rt\"`, "reject: rejected on purpose"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not mention %q:\n%s", w, stderr)
		}
	}
}

func TestRunServesPluginsList(t *testing.T) {
	t.Setenv(pluginModeEnv, "1")
	path, root := writeConfig(t, "")
	cfg, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var logs testutil.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runHost(ctx, cfg, hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug}))
	}()

	sock := filepath.Join(root, config.DefaultSocketName)
	client := localapi.NewClient(sock)
	var plugins []localapi.PluginInfo
	waitFor(t, 20*time.Second, func() bool {
		plugins, err = client.Plugins(ctx)
		return err == nil && len(plugins) == 1 && plugins[0].Ready
	}, func() string { return fmt.Sprintf("plugins = %+v, err = %v\nlogs:\n%s", plugins, err, logs.String()) })
	if p := plugins[0]; p.Name != "rt" || p.Kind != "runtime" || p.Version != "0.0.1" || p.State != "running" {
		t.Errorf("plugin = %+v; want rt, runtime, 0.0.1, running", p)
	}

	code, stdout, stderr := execute(t, ctx, "plugins", "list", "--config", path)
	if code != 0 || !strings.Contains(stdout, "rt") || !strings.Contains(stdout, "running") {
		t.Errorf("plugins list: code %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("runHost after cancel: %v", err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("api socket still present after stop: %v", err)
	}
}

func waitFor(t *testing.T, limit time.Duration, cond func() bool, describe func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: %s", limit, describe())
		}
		<-time.After(20 * time.Millisecond)
	}
}
