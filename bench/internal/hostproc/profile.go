package hostproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The host serves its profiles on its local API; the runtime plugin serves
// them on DIR/runtime-containerd.sock when the host runs with ProfileEnv
// (sdk.EnvProfileDir), which its plugins inherit.

// pluginProfileName is runtime-containerd's sdk.Plugin.Name.
const pluginProfileName = "runtime-containerd"

// profileDirEnv is sdk.EnvProfileDir; bench/ may not import sdk/.
const profileDirEnv = "PODHOST_PLUGIN_PPROF_DIR"

// ProfileEnv is Config.Env that makes the plugin serve its profiles in
// dir; nil for an empty dir.
func ProfileEnv(dir string) []string {
	if dir == "" {
		return nil
	}
	return []string{profileDirEnv + "=" + dir}
}

// ProfileCPU starts fetching a CPU profile of d (whole seconds) of the
// host and of its plugin at once, into dir/host-cpu.pprof and
// dir/plugin-cpu.pprof, and returns the function that waits until both are
// written and says where. An empty dir profiles nothing. The host must run
// with ProfileEnv(dir).
func (h *Host) ProfileCPU(ctx context.Context, prog, dir string, d time.Duration) (wait func() error) {
	if dir == "" {
		return func() error { return nil }
	}
	hostSocket := filepath.Join(h.Root, "host.sock")
	targets := map[string]string{
		filepath.Join(dir, "host-cpu.pprof"):   hostSocket,
		filepath.Join(dir, "plugin-cpu.pprof"): filepath.Join(dir, pluginProfileName+".sock"),
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for out, socket := range targets {
		wg.Go(func() {
			if err := fetchProfile(ctx, socket, fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds())), out); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	return func() error {
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s: CPU profiles in %s (go tool pprof -top FILE)\n", prog, dir)
		return nil
	}
}

// fetchProfile GETs path on the unix socket into the file out.
func fetchProfile(ctx context.Context, socket, path, out string) error {
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", socket)
	}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://profile"+path, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("profile from %s: %w", socket, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("profile from %s: %s: %s", socket, resp.Status, b)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("profile from %s: %w", socket, err)
	}
	return f.Close()
}
