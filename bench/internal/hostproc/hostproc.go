// Package hostproc builds podhost and runtime-containerd, runs `podhost
// run` as a subprocess with only that runtime plugin, fetches CPU
// profiles of both (profile.go) and samples the CPU and RSS of processes
// from /proc (usage.go), for the benchmark
// programs under bench/ (podstart, kubepods, volstart, probes); only they import it.
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

// Build builds the host and runtime-containerd into dir as the Makefile
// does (static) and returns the host binary and the plugin dir. It must run
// inside the podhost module.
func Build(ctx context.Context, dir, version string) (hostBin, pluginDir string, err error) {
	hostBin = filepath.Join(dir, "podhost")
	pluginDir = filepath.Join(dir, "plugins")
	err = BuildPackages(ctx, version, map[string]string{hostBin: "./cmd/host", filepath.Join(pluginDir, "runtime-containerd"): "./plugins/runtime-containerd"})
	return hostBin, pluginDir, err
}

// BuildPackages builds each package of the module (./cmd/host, …) into its
// target file, static, with main.version set to version. It must run
// inside the podhost module.
func BuildPackages(ctx context.Context, version string, targets map[string]string) error {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" || mod == os.DevNull {
		return fmt.Errorf("run inside the podhost module (go env GOMOD: %v)", err)
	}
	for target, pkg := range targets {
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-X main.version="+version, "-o", target, pkg)
		cmd.Dir = filepath.Dir(mod)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
		}
	}
	return nil
}

// Config says how to run a host.
type Config struct {
	// Dir holds the host's root dir, config and log.
	Dir string
	// Bin is the podhost binary; PluginDir holds runtime-containerd.
	Bin, PluginDir string
	// Endpoint is the CRI endpoint the plugin talks to (unix://…).
	Endpoint string
	// Extra is YAML appended to the host config (top-level keys).
	Extra string
	// Env is added to the host's environment; its plugins inherit it.
	Env []string
}

// Host is a `podhost run` subprocess.
type Host struct {
	// Client talks to the host's local API.
	Client *localapi.Client
	// Log is the file the host's output goes to.
	Log string
	// Root is the host's root dir (host.sock lives there).
	Root string

	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	plugin  int // the runtime plugin's PID, to be sure it ends
}

// Start writes a config (only the runtime plugin) and runs the host on a
// root dir under c.Dir, and waits until the plugin is ready.
func Start(ctx context.Context, c Config) (*Host, error) {
	root := filepath.Join(c.Dir, "root")
	cfgPath := filepath.Join(c.Dir, "host.yaml")
	cfg := fmt.Sprintf(`apiVersion: podhost.dev/v1alpha1
kind: HostConfig
rootDir: %s
pluginDir: %s
logLevel: info
evictionHard: {nodefs.available: "0%%", nodefs.inodesFree: "0%%", imagefs.available: "0%%"}
plugins:
  - name: %s
    kind: runtime
    path: runtime-containerd
    config: {endpoint: "%s"}
%s`, root, c.PluginDir, PluginName, c.Endpoint, c.Extra)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	h := &Host{Log: filepath.Join(c.Dir, "host.log"), Root: root, exited: make(chan struct{}),
		Client: localapi.NewClient(filepath.Join(root, "host.sock"))}
	logFile, err := os.Create(h.Log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	h.cmd = exec.Command(c.Bin, "run", "--config", cfgPath)
	h.cmd.Stdout, h.cmd.Stderr = logFile, logFile
	h.cmd.Env = append(os.Environ(), c.Env...)
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
					h.plugin = p.PID
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

// PID is the host's process ID; PluginPID the runtime plugin's.
func (h *Host) PID() int       { return h.cmd.Process.Pid }
func (h *Host) PluginPID() int { return h.plugin }

// Exited is closed when the host process has ended.
func (h *Host) Exited() <-chan struct{} { return h.exited }

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
	// The host made its root dir a shared mount by mounting it on
	// itself (as the kubelet does); undone so that the dir can go.
	_ = syscall.Unmount(h.Root, syscall.MNT_DETACH)
	if h.plugin > 0 {
		deadline := time.Now().Add(5 * time.Second)
		for ProcessAlive(h.plugin) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if ProcessAlive(h.plugin) {
			_ = syscall.Kill(h.plugin, syscall.SIGKILL)
			errs = append(errs, fmt.Errorf("runtime plugin %d outlived the host; killed", h.plugin))
		}
	}
	return errors.Join(errs...)
}

// Close stops the host (Stop) and, when the run failed (runErr), prints
// the tail of its log; prog names the program in the messages.
func (h *Host) Close(prog string, runErr error) {
	if err := h.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: stopping the host: %v\n", prog, err)
	}
	if runErr != nil {
		fmt.Fprintf(os.Stderr, "%s: host log tail:\n%s\n", prog, h.LogTail(40))
	}
}

// LogTail is the last n lines of the host's log.
func (h *Host) LogTail(n int) string {
	b, _ := os.ReadFile(h.Log)
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
