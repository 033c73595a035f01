package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/test/crisetup"
)

// testVersion is stamped into the binaries this test builds.
const testVersion = "e2e-test"

var pluginBinaries = []string{"runtime-containerd", "volume-csi", "volume-fc", "volume-iscsi"}

// buildBinaries builds bin/podhost and the four plugins into dir, as the
// Makefile does (static, version stamped), and returns the host binary.
func buildBinaries(t *testing.T, dir string) string {
	t.Helper()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]string{filepath.Join(dir, "podhost"): "./cmd/host"}
	for _, p := range pluginBinaries {
		targets[filepath.Join(dir, "plugins", p)] = "./plugins/" + p
	}
	for out, pkg := range targets {
		cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath",
			"-ldflags", "-X main.version="+testVersion, "-o", out, pkg)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	return filepath.Join(dir, "podhost")
}

func hostConfig(root, pluginDir, endpoint, extra string) string {
	return fmt.Sprintf(`apiVersion: podhost.dev/v1alpha1
kind: HostConfig
rootDir: %[1]s
pluginDir: %[2]s
logLevel: debug
evictionHard: {nodefs.available: "0%%", nodefs.inodesFree: "0%%", imagefs.available: "0%%"}
supervision:
  restartBackoff: {initial: 100ms, max: 1s}
plugins:
  - name: containerd
    kind: runtime
    path: runtime-containerd
    config: {endpoint: "%[3]s"}
  - name: csi
    kind: volume
    path: volume-csi
    config: {drivers: [{name: loop.csi.podhost.dev, endpoint: "unix://%[1]s/csi.sock"}]}
  - name: fc
    kind: volume
    path: volume-fc
  - name: iscsi
    kind: volume
    path: volume-iscsi
%[4]s`, root, pluginDir, endpoint, extra)
}

// TestHostWithRealPlugins runs the real host binary with the four real plugin
// binaries against a private containerd: validate, start, list, a plugin
// killed with SIGKILL and restarted, and a graceful stop on SIGTERM.
func TestHostWithRealPlugins(t *testing.T) {
	ctrd := crisetup.StartForTest(t)
	dir := t.TempDir()
	hostBin := buildBinaries(t, filepath.Join(dir, "bin"))
	root := filepath.Join(dir, "root")
	cfgPath := filepath.Join(dir, "host.yaml")
	write := func(path, doc string) {
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(cfgPath, hostConfig(root, filepath.Join(dir, "bin", "plugins"), ctrd.Endpoint(), ""))

	t.Run("validate", func(t *testing.T) {
		if out, err := exec.CommandContext(t.Context(), hostBin, "validate", "--config", cfgPath).CombinedOutput(); err != nil {
			t.Fatalf("podhost validate on a good config: %v\n%s", err, out)
		}
		bad := filepath.Join(dir, "bad.yaml")
		write(bad, hostConfig(root, filepath.Join(dir, "bin", "plugins"), ctrd.Endpoint(), "    pth: typo\n"))
		out, err := exec.CommandContext(t.Context(), hostBin, "validate", "--config", bad).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("podhost validate on a misspelt field: err = %v; want exit status 1\n%s", err, out)
		}
		if !strings.Contains(string(out), "plugins[3].pth") {
			t.Errorf("podhost validate does not name the misspelt field plugins[3].pth:\n%s", out)
		}
	})

	logPath := filepath.Join(dir, "host.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	run := exec.Command(hostBin, "run", "--config", cfgPath)
	run.Stdout, run.Stderr = logFile, logFile
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	t.Cleanup(func() {
		_ = run.Process.Kill()
		<-exited
		unmountRoot(root)
	})
	hostLog := func() string { b, _ := os.ReadFile(logPath); return string(b) }

	client := localapi.NewClient(filepath.Join(root, "host.sock"))
	ctx := t.Context()
	byName := func() map[string]localapi.PluginInfo {
		plugins, err := client.Plugins(ctx)
		if err != nil {
			return nil
		}
		m := map[string]localapi.PluginInfo{}
		for _, p := range plugins {
			m[p.Name] = p
		}
		return m
	}
	allReady := func(m map[string]localapi.PluginInfo) bool {
		for _, name := range []string{"containerd", "csi", "fc", "iscsi"} {
			if p, ok := m[name]; !ok || !p.Ready || p.State != "running" {
				return false
			}
		}
		return true
	}
	var plugins map[string]localapi.PluginInfo
	poll(t, 60*time.Second, func() bool { plugins = byName(); return allReady(plugins) },
		func() string { return fmt.Sprintf("plugins: %+v\nhost log:\n%s", plugins, hostLog()) })
	for name, p := range plugins {
		if p.Version != testVersion || p.PID == 0 {
			t.Errorf("plugin %s: version %q pid %d; want version %q and a pid", name, p.Version, p.PID, testVersion)
		}
	}
	if !strings.Contains(hostLog(), "host.containerd") {
		t.Errorf("host log has no line under the plugin's name host.containerd:\n%s", hostLog())
	}

	t.Run("plugin killed with SIGKILL is restarted", func(t *testing.T) {
		old := plugins["fc"]
		if err := syscall.Kill(old.PID, syscall.SIGKILL); err != nil {
			t.Fatalf("kill plugin fc (pid %d): %v", old.PID, err)
		}
		var now map[string]localapi.PluginInfo
		poll(t, 30*time.Second, func() bool {
			now = byName()
			p, ok := now["fc"]
			return ok && p.Ready && p.Restarts >= 1 && p.PID != old.PID && p.PID != 0
		}, func() string { return fmt.Sprintf("plugins: %+v\nhost log:\n%s", now, hostLog()) })
		if now["containerd"].Restarts != 0 || now["containerd"].PID != plugins["containerd"].PID {
			t.Errorf("killing fc disturbed containerd's plugin: before %+v, after %+v", plugins["containerd"], now["containerd"])
		}
		plugins = now
	})

	t.Run("SIGTERM stops the host and its plugins", func(t *testing.T) {
		if err := run.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			exited <- err
			if err != nil {
				t.Fatalf("host exited with %v after SIGTERM; want status 0\n%s", err, hostLog())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("host did not exit within 30 s of SIGTERM\n%s", hostLog())
		}
		for name, p := range plugins {
			poll(t, 10*time.Second, func() bool { return !processAlive(p.PID) },
				func() string { return fmt.Sprintf("plugin %s (pid %d) still runs after the host stopped", name, p.PID) })
		}
		if _, err := os.Stat(filepath.Join(root, "host.sock")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("api socket left behind: %v", err)
		}
	})
}

// processAlive reports whether pid is a live process (not a zombie).
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func poll(t *testing.T, limit time.Duration, cond func() bool, describe func() string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("not reached within %s: %s", limit, describe())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
