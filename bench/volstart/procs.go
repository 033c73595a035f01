package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/podhost/podhost/bench/internal/hostproc"
)

const (
	driverName = "loop.csi.podhost.dev"
	volumeSize = "16Mi"
)

// volumeID is the loop driver's ID of the volume named name (see
// cmd/csi-loopdriver).
func volumeID(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "loop-" + hex.EncodeToString(sum[:16])
}

// proc is a child process with its log.
type proc struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	log     string
}

func startProc(bin, log string, args ...string) (*proc, error) {
	f, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := &proc{cmd: exec.Command(bin, args...), exited: make(chan struct{}), log: log}
	p.cmd.Stdout, p.cmd.Stderr = f, f
	// If volstart dies without cleaning up, the child goes too.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", filepath.Base(bin), err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM and kills the process after limit.
func (p *proc) stop(limit time.Duration) error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.waitErr != nil {
			return fmt.Errorf("%s exited with %w after SIGTERM", filepath.Base(p.cmd.Path), p.waitErr)
		}
		return nil
	case <-time.After(limit):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("%s did not exit within %s of SIGTERM; killed", filepath.Base(p.cmd.Path), limit)
	}
}

// logTail is the last n lines of the process's log.
func (p *proc) logTail(n int) string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// driver is csi-loopdriver on its socket.
type driver struct {
	*proc
	endpoint, stateDir, dir string
}

// startDriver runs the driver in dir with the volumes named created at
// start, and waits for its socket.
func startDriver(ctx context.Context, dir, bin string, names []string) (*driver, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	d := &driver{endpoint: filepath.Join(dir, "csi.sock"), stateDir: filepath.Join(dir, "state"), dir: dir}
	cfg := fmt.Sprintf("endpoint: unix://%s\nstateDir: %s\nnodeID: volstart\ndefaultVolumeSize: %s\nvolumes: [%s]\n",
		d.endpoint, d.stateDir, volumeSize, strings.Join(names, ", "))
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	p, err := startProc(bin, filepath.Join(dir, "driver.log"), "-config", cfgPath)
	if err != nil {
		return nil, err
	}
	d.proc = p
	if err := waitFor(ctx, time.Minute, func() bool { _, err := os.Stat(d.endpoint); return err == nil }, p.exited); err != nil {
		_ = p.stop(10 * time.Second)
		return nil, fmt.Errorf("the driver's socket: %w\n%s", err, p.logTail(20))
	}
	return d, nil
}

// stop stops the driver and detaches every loop device that still holds
// one of its images (what a failed run left staged).
func (d *driver) stop() error {
	err := d.proc.stop(30 * time.Second)
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		if b, rerr := os.ReadFile(f); rerr == nil && strings.HasPrefix(string(b), d.stateDir+"/") {
			_ = exec.Command("losetup", "-d", "/dev/"+filepath.Base(filepath.Dir(filepath.Dir(f)))).Run()
		}
	}
	return err
}

// host is a `podhost run` subprocess with runtime-containerd and volume-csi.
type host struct {
	*hostproc.Host
	csiPID int
}

// claimManifest defines a PersistentVolume and the claim bound to it, both
// called name, of the loop driver's volume name.
func claimManifest(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: %[1]s}
spec:
  capacity: {storage: %[3]s}
  accessModes: [ReadWriteOnce]
  csi: {driver: %[4]s, volumeHandle: %[2]s, fsType: ext4}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: %[1]s, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  volumeName: %[1]s
  resources: {requests: {storage: %[3]s}}
`, name, volumeID(name), volumeSize, driverName)
}

// startHost writes a claim for every volume name into manifestDir, runs
// the host with volume-csi serving the driver (and, with profileDir, its
// plugins' profiles there) and waits until both plugins are ready.
func startHost(ctx context.Context, ws *hostproc.Workspace, profileDir string, d *driver, names []string) (*host, error) {
	manifests := filepath.Join(ws.Dir, "manifests")
	if err := os.MkdirAll(manifests, 0o700); err != nil {
		return nil, err
	}
	for _, n := range names {
		if strings.HasPrefix(n, "direct-") {
			continue
		}
		if err := os.WriteFile(filepath.Join(manifests, n+".yaml"), []byte(claimManifest(n)), 0o600); err != nil {
			return nil, err
		}
	}
	extra := fmt.Sprintf(`  - name: csi
    kind: volume
    path: volume-csi
    config: {drivers: [{name: %s, endpoint: "unix://%s"}], stateDir: "%s"}
manifestDir: %s
`, driverName, d.endpoint, filepath.Join(ws.Dir, "volume-csi"), manifests)
	hp, err := hostproc.Start(ctx, hostproc.Config{Dir: ws.Dir, Bin: ws.HostBin, PluginDir: ws.PluginDir,
		Endpoint: ws.Containerd.Endpoint(), Extra: extra, Env: hostproc.ProfileEnv(profileDir)})
	if err != nil {
		return nil, err
	}
	h := &host{Host: hp}
	ready := func() bool {
		ps, err := h.Client.Plugins(ctx)
		for _, pl := range ps {
			if err == nil && pl.Name == "csi" && pl.Ready && pl.State == "running" {
				h.csiPID = pl.PID
			}
		}
		return h.csiPID > 0
	}
	if err := waitFor(ctx, time.Minute, ready, hp.Exited()); err != nil {
		_ = h.stop()
		return nil, fmt.Errorf("the volume-csi plugin: %w\n%s", err, hp.LogTail(40))
	}
	return h, nil
}

// stop stops the host, kills volume-csi if it outlived it, and unmounts
// what a failed run left below the root dir.
func (h *host) stop() error {
	errs := []error{h.Host.Stop()}
	if h.csiPID > 0 && waitFor(context.Background(), 5*time.Second, func() bool { return !hostproc.ProcessAlive(h.csiPID) }, nil) != nil {
		_ = syscall.Kill(h.csiPID, syscall.SIGKILL)
		errs = append(errs, fmt.Errorf("volume-csi (%d) outlived the host; killed", h.csiPID))
	}
	if out, err := exec.Command("sh", "-c", fmt.Sprintf("grep -o ' %s/[^ ]*' /proc/self/mountinfo | sort -r | xargs -r umount -l", h.Root)).CombinedOutput(); err != nil {
		errs = append(errs, fmt.Errorf("unmount below the root dir: %w: %s", err, out))
	}
	return errors.Join(errs...)
}

// waitFor polls cond every 20 ms until it holds, limit passes, ctx ends or
// exited closes.
func waitFor(ctx context.Context, limit time.Duration, cond func() bool, exited <-chan struct{}) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return errors.New("the process exited")
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
