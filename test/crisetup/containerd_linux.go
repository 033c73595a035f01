package crisetup

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/images/localimages"
)

// Namespace is the containerd namespace CRI uses.
const Namespace = "k8s.io"

// Timeouts of the setup steps.
const (
	readyTimeout  = 30 * time.Second
	importTimeout = 60 * time.Second
	stopGrace     = 10 * time.Second
	removeTimeout = 30 * time.Second
	removeRetry   = 100 * time.Millisecond
	// shimExitTimeout bounds the wait for shims to exit after every
	// sandbox was removed; one still running then is a leak.
	shimExitTimeout = 10 * time.Second
)

// installHint ends every error about a missing host package.
const installHint = "run hack/install-deps.sh as root"

// Option configures a private instance at Start.
type Option func(*options)

type options struct {
	podNetwork bool
}

// WithPodNetwork gives the instance a pod network, so that a pod without
// hostNetwork gets its own network namespace and an IP the host reaches:
// the reference CNI plugins that hack/cni-plugins.sh builds (a missing one
// is an error naming it), a bridge of the instance holding the first
// address of a free /24 of 10.233.0.0/16 (PodSubnet), and a bridge +
// host-local conflist in CNIConf. Stop removes the bridge.
func WithPodNetwork() Option { return func(o *options) { o.podNetwork = true } }

// Containerd is a running private containerd.
type Containerd struct {
	Layout
	// PodSubnet is the subnet of the pod network (WithPodNetwork), zero
	// without one.
	PodSubnet netip.Prefix
	// Runtime and Image are CRI clients connected to the instance.
	Runtime runtimeapi.RuntimeServiceClient
	Image   runtimeapi.ImageServiceClient

	conn *grpc.ClientConn
	pid  int
	bin  string // the containerd binary; empty for an instance opened with Open
	tied bool   // the process dies with this one (StartForTest)
	// exited is closed when the process ends; nil for an instance this
	// process did not start (Open).
	exited chan struct{}
	err    error // wait error, valid once exited is closed
}

// Start starts a private containerd under dir (created if missing), waits
// for its CRI service, and imports podhost.local/pause:1 and
// podhost.local/busybox:1. The process is detached from the caller: it keeps
// running after the caller exits, until Stop. It must run as root inside
// this module (it builds the pause image).
func Start(ctx context.Context, dir string, opts ...Option) (*Containerd, error) {
	return start(ctx, dir, false, opts)
}

func start(ctx context.Context, dir string, tied bool, opts []Option) (*Containerd, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("private containerd needs root")
	}
	bin, err := exec.LookPath("containerd")
	if err != nil {
		return nil, fmt.Errorf("containerd not found (%s): %w", installHint, err)
	}
	if _, err := exec.LookPath("ctr"); err != nil {
		return nil, fmt.Errorf("ctr not found (%s): %w", installHint, err)
	}
	if _, err := exec.LookPath("runc"); err != nil {
		return nil, fmt.Errorf("runc not found (%s): %w", installHint, err)
	}
	l, err := NewLayout(dir)
	if err != nil {
		return nil, err
	}
	if pid, err := readPID(l.PIDFile); err == nil && processAlive(pid) {
		return nil, fmt.Errorf("containerd %d already runs in %s", pid, l.Dir)
	}
	for _, d := range []string{l.Dir, l.Root, l.State, l.Images, l.CNIBin, l.CNIConf, l.CNIIPAM, l.Opt, l.RuncRoot} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("create instance dir: %w", err)
		}
	}

	// Build the images first: it is the slow part and needs no containerd.
	archives, err := localimages.WriteArchives(ctx, l.Images)
	if err != nil {
		return nil, fmt.Errorf("build images: %w", err)
	}

	defaults, err := exec.CommandContext(ctx, bin, "config", "default").Output()
	if err != nil {
		return nil, fmt.Errorf("containerd config default: %w", err)
	}
	config, err := Config(defaults, l, localimages.PauseName)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(l.Config, config, 0o600); err != nil {
		return nil, fmt.Errorf("write config: %w", err)
	}

	c := &Containerd{Layout: l, bin: bin, tied: tied}
	if o.podNetwork {
		if c.PodSubnet, err = setupPodNetwork(ctx, l); err != nil {
			return nil, fmt.Errorf("pod network: %w", err)
		}
	}
	if err := c.launch(ctx); err != nil {
		_ = teardownPodNetwork(context.WithoutCancel(ctx), l)
		return nil, err
	}
	for _, a := range archives {
		if err := c.importImage(ctx, a.Path, a.Name); err != nil {
			_ = c.Stop(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return c, nil
}

// launch starts the containerd process on the instance's config, records
// its PID and waits for CRI to answer; a failure leaves no process behind.
func (c *Containerd) launch(ctx context.Context) error {
	logFile, err := os.OpenFile(c.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open containerd log: %w", err)
	}
	defer logFile.Close() // the child has its own descriptor
	// Not CommandContext: the daemon must outlive the start-up context.
	cmd := exec.Command(c.bin, "--config", c.Config)
	cmd.Dir = c.Dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if c.tied {
		// A test binary that dies without cleanup takes containerd along.
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start containerd: %w", err)
	}
	exited := make(chan struct{})
	c.pid, c.exited = cmd.Process.Pid, exited
	go func() {
		c.err = cmd.Wait()
		close(exited)
	}()
	if err := os.WriteFile(c.PIDFile, []byte(strconv.Itoa(c.pid)+"\n"), 0o600); err != nil {
		c.kill()
		return fmt.Errorf("write pid file: %w", err)
	}
	if c.conn == nil {
		if err := c.connect(); err != nil {
			c.kill()
			return err
		}
	}
	if err := c.waitReady(ctx); err != nil {
		c.kill()
		return err
	}
	return nil
}

// Open attaches to an instance that Start left running under dir.
func Open(ctx context.Context, dir string) (*Containerd, error) {
	l, err := NewLayout(dir)
	if err != nil {
		return nil, err
	}
	pid, err := readPID(l.PIDFile)
	if err != nil {
		return nil, err
	}
	c := &Containerd{Layout: l, pid: pid}
	if err := c.connect(); err != nil {
		return nil, err
	}
	return c, nil
}

// PID is the process ID of containerd.
func (c *Containerd) PID() int { return c.pid }

func (c *Containerd) connect() error {
	conn, err := grpc.NewClient(c.Endpoint(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("dial %s: %w", c.Endpoint(), err)
	}
	c.conn = conn
	c.Runtime = runtimeapi.NewRuntimeServiceClient(conn)
	c.Image = runtimeapi.NewImageServiceClient(conn)
	return nil
}

// waitReady polls the CRI Version call until it answers, containerd exits,
// or the deadline passes.
func (c *Containerd) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		callCtx, callCancel := context.WithTimeout(ctx, time.Second)
		_, err := c.Runtime.Version(callCtx, &runtimeapi.VersionRequest{})
		callCancel()
		if err == nil {
			return nil
		}
		lastErr = err
		select {
		case <-c.exited:
			return fmt.Errorf("containerd exited before CRI answered (%v): %s", c.err, c.LogTail(20))
		case <-ctx.Done():
			return fmt.Errorf("CRI on %s did not answer: %w: %s", c.Socket, lastErr, c.LogTail(20))
		case <-tick.C:
		}
	}
}

// Import imports an image archive (images/ociarchive) holding the image
// name, as Start does with podhost's own images.
func (c *Containerd) Import(ctx context.Context, archive, name string) error {
	return c.importImage(ctx, archive, name)
}

// importImage imports an archive with ctr and waits until CRI lists the
// image: CRI learns about images that ctr imports from containerd events.
func (c *Containerd) importImage(ctx context.Context, archive, name string) error {
	ctx, cancel := context.WithTimeout(ctx, importTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ctr", "-a", c.Socket, "-n", Namespace, "images", "import", archive).CombinedOutput()
	if err != nil {
		return fmt.Errorf("import %s: %w: %s", archive, err, strings.TrimSpace(string(out)))
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := c.Image.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: name}})
		if err == nil && resp.GetImage() != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("image %s imported but CRI does not list it (last error: %v)", name, err)
		case <-tick.C:
		}
	}
}

// Stop removes every container and sandbox through CRI, waits up to 10 s
// for their shims to exit, stops containerd (SIGTERM, then SIGKILL after
// 10 s), kills any shim of this instance that is still running together
// with its processes, and unmounts whatever is left mounted under the
// instance dir. It leaves the directory in place. The error reports
// everything that had to be forced: a leftover shim with processes under
// it means a sandbox escaped cleanup (an idle one is containerd's own, from
// a cancelled sandbox start, and is only killed).
func (c *Containerd) Stop(ctx context.Context) error {
	var errs []error
	if c.conn != nil && c.alive() {
		errs = append(errs, c.removeAll(ctx)...)
		// A shim exits a moment after its sandbox is removed, and
		// containerd's cleanup of a dead shim runs one for a while.
		c.waitShimsGone(ctx, shimExitTimeout)
	}
	if c.conn != nil {
		_ = c.conn.Close()
	}
	if err := c.terminate(); err != nil {
		errs = append(errs, err)
	}
	killed, err := killShims(c.Socket)
	if err != nil {
		errs = append(errs, err)
	}
	if killed {
		// The killed tasks were never deleted, so their cgroups and shim
		// sockets remain.
		c.removeShimSockets()
		if err := removeCgroups(ctx, c.taskIDs()); err != nil {
			errs = append(errs, err)
		}
	}
	if err := unmountUnder(c.Dir); err != nil {
		errs = append(errs, err)
	}
	if err := teardownPodNetwork(ctx, c.Layout); err != nil {
		errs = append(errs, err)
	}
	_ = os.Remove(c.PIDFile)
	return errors.Join(errs...)
}

// removeAll stops and removes every sandbox (which stops and removes its
// containers), several at a time, then any container left without one. A
// sandbox whose shim is already gone counts as stopped once it is removed
// (removeSandbox).
func (c *Containerd) removeAll(ctx context.Context) []error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	sandboxes, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return []error{fmt.Errorf("list sandboxes: %w", err)}
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, 8)
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}
	for _, sb := range sandboxes.GetItems() {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := c.removeSandbox(ctx, sb.Id); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	containers, err := c.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return append(errs, fmt.Errorf("list containers: %w", err))
	}
	for _, ctr := range containers.GetContainers() {
		if _, err := c.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: ctr.Id, Timeout: 0}); err != nil {
			errs = append(errs, fmt.Errorf("stop container %s: %w", ctr.Id, err))
		}
		if _, err := c.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: ctr.Id}); err != nil {
			errs = append(errs, fmt.Errorf("remove container %s: %w", ctr.Id, err))
		}
	}
	return errs
}

// removeSandbox stops and removes one sandbox. A failed stop or removal
// is no leak yet: containerd 1.6 fails the kill of a sandbox whose shim is
// already gone ("ttrpc: closed") until it has reaped that shim, and then
// stops and removes it. So both are tried again, every removeRetry, for up
// to removeTimeout (or until ctx ends); only a sandbox still there then is
// an error, with the last errors. Whether anything escaped (a shim, a
// mount) Stop checks afterwards.
func (c *Containerd) removeSandbox(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	for {
		var errs []error
		if _, err := c.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
			errs = append(errs, fmt.Errorf("stop sandbox %s: %w", id, err))
		}
		_, err := c.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
		if err == nil || status.Code(err) == codes.NotFound {
			return nil
		}
		errs = append(errs, fmt.Errorf("remove sandbox %s: %w", id, err))
		select {
		case <-ctx.Done():
			return errors.Join(errs...)
		case <-time.After(removeRetry):
		}
	}
}

// waitShimsGone waits up to d (or until ctx ends) until no shim of this
// instance runs.
func (c *Containerd) waitShimsGone(ctx context.Context, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		if shims, err := c.Shims(); err != nil || len(shims) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(removeRetry):
		}
	}
}

// alive reports whether the containerd process is still running.
func (c *Containerd) alive() bool {
	if c.exited != nil {
		select {
		case <-c.exited:
			return false
		default:
			return true
		}
	}
	return processAlive(c.pid)
}

// terminate sends SIGTERM and waits, then SIGKILL.
func (c *Containerd) terminate() error {
	if !c.alive() {
		return nil
	}
	if err := syscall.Kill(c.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal containerd %d: %w", c.pid, err)
	}
	if c.waitExit(stopGrace) {
		return nil
	}
	c.kill()
	if !c.waitExit(5 * time.Second) {
		return fmt.Errorf("containerd %d survived SIGKILL", c.pid)
	}
	return fmt.Errorf("containerd %d ignored SIGTERM for %v and was killed", c.pid, stopGrace)
}

func (c *Containerd) kill() {
	_ = syscall.Kill(c.pid, syscall.SIGKILL)
	if c.exited != nil {
		<-c.exited
	}
}

// waitExit waits up to d for containerd to exit.
func (c *Containerd) waitExit(d time.Duration) bool {
	if c.exited != nil {
		select {
		case <-c.exited:
			return true
		case <-time.After(d):
			return false
		}
	}
	return waitGone([]int{c.pid}, d)
}

// LogTail returns the last n lines of containerd's log.
func (c *Containerd) LogTail(n int) string {
	data, err := os.ReadFile(c.Log)
	if err != nil {
		return fmt.Sprintf("(no containerd log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "containerd log " + c.Log + ":\n" + strings.Join(lines, "\n")
}

func readPID(name string) (int, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return 0, fmt.Errorf("read pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pid file %s: bad content %q", name, data)
	}
	return pid, nil
}

// Shims returns the process IDs of the running shims of this instance.
func (c *Containerd) Shims() ([]int, error) {
	return shimsOf(c.Socket)
}
