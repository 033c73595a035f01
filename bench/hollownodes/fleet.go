package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/podhost/podhost/test/kubecluster"
)

// fleet is the control plane and the hollow nodes.
type fleet struct {
	dir     string
	cluster *kubecluster.Cluster
	nodes   []*hollow
}

// hollow is one node: a podhost process and its files.
type hollow struct {
	name string
	root string
	cmd  *exec.Cmd
	log  string
}

func nodeName(i int) string { return fmt.Sprintf("hollow-%03d", i) }

func startFleet(ctx context.Context, dir string, o options) (*fleet, error) {
	names := make([]string, o.nodes)
	for i := range names {
		names[i] = nodeName(i)
	}
	start := time.Now()
	c, err := kubecluster.Start(ctx, filepath.Join(dir, "cluster"), kubecluster.Options{Nodes: names})
	if err != nil {
		return nil, err
	}
	f := &fleet{dir: dir, cluster: c}
	fmt.Fprintf(os.Stderr, "control plane ready in %s\n", time.Since(start).Round(time.Millisecond))
	pluginDir := filepath.Join(dir, "plugins")
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(pluginDir, "runtime-memory"), "./examples/runtime-memory")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		f.stop()
		return nil, fmt.Errorf("building runtime-memory: %w\n%s", err, out)
	}
	host, err := filepath.Abs(o.hostBin)
	if err != nil {
		f.stop()
		return nil, err
	}
	for _, name := range names {
		h, err := f.startNode(ctx, host, pluginDir, name)
		if err != nil {
			f.stop()
			return nil, err
		}
		f.nodes = append(f.nodes, h)
	}
	return f, nil
}

func (f *fleet) startNode(ctx context.Context, host, pluginDir, name string) (*hollow, error) {
	kubeconfig, err := f.cluster.NodeKubeconfig(name)
	if err != nil {
		return nil, err
	}
	h := &hollow{name: name, root: filepath.Join(f.dir, "nodes", name)}
	if err := os.MkdirAll(h.root, 0o700); err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf(`apiVersion: podhost.dev/v1alpha1
kind: HostConfig
rootDir: %s
pluginDir: %s
nodeName: %s
logLevel: warn
evictionHard: {nodefs.available: "0%%", nodefs.inodesFree: "0%%", imagefs.available: "0%%"}
kubernetes:
  kubeconfig: %s
  nodeIP: 127.0.0.1
plugins:
  - name: memory
    kind: runtime
    path: runtime-memory
    config: {images: ["podhost.local/busybox:1", "podhost.local/pause:1"], offline: true}
`, h.root, pluginDir, name, kubeconfig)
	cfgPath := filepath.Join(h.root, "host.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	h.log = filepath.Join(h.root, "podhost.log")
	out, err := os.Create(h.log)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	h.cmd = exec.Command(host, "run", "--config", cfgPath)
	h.cmd.Stdout, h.cmd.Stderr = out, out
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := h.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting node %s: %w", name, err)
	}
	return h, nil
}

// stop stops the nodes (SIGTERM, then SIGKILL after 20 s) and the control
// plane.
func (f *fleet) stop() {
	for _, h := range f.nodes {
		_ = h.cmd.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, h := range f.nodes {
		done := make(chan struct{})
		go func() { _ = h.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Until(deadline)):
			_ = h.cmd.Process.Kill()
			<-done
		}
		// The host made its root dir a shared mount by mounting it on
		// itself (as the kubelet does); undone so that the dir can go.
		_ = syscall.Unmount(h.root, syscall.MNT_DETACH)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = f.cluster.Stop(ctx)
}
