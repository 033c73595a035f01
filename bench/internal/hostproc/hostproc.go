// Package hostproc runs `podhost run` as a subprocess for the benchmark
// programs under bench/: it builds the host and runtime-containerd as the
// Makefile does, starts the host with only the runtime plugin on a private
// containerd, and stops it (and the plugin) whatever happens; StartEnv and
// Env.Close do all of it with the containerd and a temporary directory.
// Only packages under bench/ import it.
package hostproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/podhost/podhost/host/localapi"
)

// PluginName is the runtime plugin's name in the host config.
const PluginName = "containerd"

// Build builds the host (reporting version) and runtime-containerd into
// dir as the Makefile does (static) and returns the host binary and the
// plugin dir. It must run inside the podhost module.
func Build(ctx context.Context, dir, version string) (hostBin, pluginDir string, err error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" || strings.TrimSpace(string(out)) == os.DevNull {
		return "", "", fmt.Errorf("run the benchmark inside the podhost module (go env GOMOD: %v)", err)
	}
	repo := filepath.Dir(strings.TrimSpace(string(out)))
	hostBin = filepath.Join(dir, "podhost")
	pluginDir = filepath.Join(dir, "plugins")
	for target, pkg := range map[string]string{hostBin: "./cmd/host", filepath.Join(pluginDir, "runtime-containerd"): "./plugins/runtime-containerd"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-X main.version="+version, "-o", target, pkg)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
		}
	}
	return hostBin, pluginDir, nil
}

// Host is a `podhost run` subprocess.
type Host struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	log     string
	// Client is the host's local API.
	Client *localapi.Client
	// PluginPID is the runtime plugin's process, to be sure it ends.
	PluginPID int
}

// PID is the host's process ID.
func (h *Host) PID() int { return h.cmd.Process.Pid }

// Start writes a config (only the runtime plugin) and runs the host on a
// root dir under dir, and waits until the plugin is ready.
func Start(ctx context.Context, dir, bin, pluginDir, endpoint string) (*Host, error) {
	root := filepath.Join(dir, "root")
	cfgPath := filepath.Join(dir, "host.yaml")
	cfg := fmt.Sprintf(`apiVersion: podhost.dev/v1alpha1
kind: HostConfig
rootDir: %s
pluginDir: %s
logLevel: info
plugins:
  - name: %s
    kind: runtime
    path: runtime-containerd
    config: {endpoint: "%s"}
`, root, pluginDir, PluginName, endpoint)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	h := &Host{log: filepath.Join(dir, "host.log"), exited: make(chan struct{}),
		Client: localapi.NewClient(filepath.Join(root, "host.sock"))}
	logFile, err := os.Create(h.log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	h.cmd = exec.Command(bin, "run", "--config", cfgPath)
	h.cmd.Stdout, h.cmd.Stderr = logFile, logFile
	// If the benchmark dies without cleaning up, the host goes too.
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := h.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	go func() {
		h.waitErr = h.cmd.Wait()
		close(h.exited)
	}()

	deadline := time.Now().Add(60 * time.Second)
	for {
		if ps, err := h.Client.Plugins(ctx); err == nil {
			for _, p := range ps {
				if p.Name == PluginName && p.Ready && p.State == "running" {
					h.PluginPID = p.PID
					return h, nil
				}
			}
		}
		select {
		case <-h.exited:
			return nil, fmt.Errorf("host exited at start (%v):\n%s", h.waitErr, h.LogTail(40))
		case <-ctx.Done():
			_ = h.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = h.Stop()
			return nil, fmt.Errorf("runtime plugin not ready within 60 s:\n%s", h.LogTail(40))
		}
	}
}

// Stop sends SIGTERM, kills the host after 30 s, and kills the plugin if
// it outlives the host. Pods are left to containerd's cleanup.
func (h *Host) Stop() error {
	var errs []error
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
		if h.waitErr != nil {
			errs = append(errs, fmt.Errorf("host exited with %w after SIGTERM", h.waitErr))
		}
	case <-time.After(30 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.exited
		errs = append(errs, errors.New("host did not exit within 30 s of SIGTERM; killed"))
	}
	if h.PluginPID > 0 {
		deadline := time.Now().Add(5 * time.Second)
		for ProcessAlive(h.PluginPID) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if ProcessAlive(h.PluginPID) {
			_ = syscall.Kill(h.PluginPID, syscall.SIGKILL)
			errs = append(errs, fmt.Errorf("runtime plugin %d outlived the host; killed", h.PluginPID))
		}
	}
	return errors.Join(errs...)
}

// LogTail is the last n lines of the host's log.
func (h *Host) LogTail(n int) string {
	b, _ := os.ReadFile(h.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ProcessAlive reports whether pid is a live process (not a zombie).
func ProcessAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command in parentheses, which may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
