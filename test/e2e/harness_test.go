package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/runtimemanager"
	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/test/criproxy"
	"github.com/podhost/podhost/test/crisetup"
)

// binDir holds the binaries built once per package run (buildOnce); it is
// removed by TestMain.
var (
	binDir    string
	buildOnce sync.Once
	builtHost string
)

// TestMain runs no test under -short (make unit): every test here needs
// root, a private containerd and the built binaries, which make test and
// make e2e provide; without -short a missing one fails its test.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("test/e2e: skipped under -short; run make e2e or make test")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "podhost-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// sharedBinaries builds the host and plugin binaries on first use and
// returns the host binary; a failed build fails every test that asks.
func sharedBinaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		// buildBinaries fails t on error; builtHost then stays empty.
		builtHost = buildBinaries(t, binDir)
	})
	if builtHost == "" {
		t.Fatal("building the host and plugin binaries failed (see the first test that built them)")
	}
	return builtHost
}

// podHost is a private containerd and a host run as a subprocess on a
// temporary root dir, restartable on the same root.
type podHost struct {
	t         *testing.T
	ctrd      *crisetup.Containerd
	bin       string
	dir       string
	root      string
	manifests string
	config    string
	client    *localapi.Client

	mu      sync.Mutex
	proc    *exec.Cmd
	exited  chan error
	runs    int
	logs    []string
	orphans []int // plugin PIDs of hosts killed with SIGKILL
}

// startPodHost starts a containerd and a host with only the containerd
// runtime plugin, and waits until the plugin is ready.
func startPodHost(t *testing.T) *podHost {
	t.Helper()
	return startPodHostWith(t, "")
}

// startPodHostWith is startPodHost with extra top-level fields appended to
// the host config, on a containerd started with opts.
func startPodHostWith(t *testing.T, extra string, opts ...crisetup.Option) *podHost {
	t.Helper()
	return startPodHostVia(t, extra, nil, opts...)
}

// startPodHostVia is startPodHostWith whose runtime plugin reaches
// containerd at the endpoint via returns, given the instance (a proxy in
// front of its socket); nil via is the instance's own endpoint. The
// test's own CRI clients (h.ctrd) always talk to containerd directly.
func startPodHostVia(t *testing.T, extra string, via func(*crisetup.Containerd) string, opts ...crisetup.Option) *podHost {
	t.Helper()
	h := &podHost{t: t, bin: sharedBinaries(t)}
	h.ctrd = crisetup.StartForTest(t, opts...)
	endpoint := h.ctrd.Endpoint()
	if via != nil {
		endpoint = via(h.ctrd)
	}
	h.dir = t.TempDir()
	h.root = filepath.Join(h.dir, "root")
	h.manifests = filepath.Join(h.dir, "manifests")
	h.config = filepath.Join(h.dir, "host.yaml")
	if err := os.MkdirAll(h.manifests, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`apiVersion: podhost.dev/v1alpha1
kind: HostConfig
rootDir: %s
pluginDir: %s
manifestDir: %s
logLevel: debug
# Disk-pressure eviction off, as kind's nodes have it: the tests share a
# disk whose free share is not theirs to decide (TestNodeDiskPressureEviction
# sets its own).
evictionHard: {nodefs.available: "0%%", nodefs.inodesFree: "0%%", imagefs.available: "0%%"}
supervision:
  restartBackoff: {initial: 200ms, max: 2s}
plugins:
  - name: containerd
    kind: runtime
    path: runtime-containerd
    config: {endpoint: "%s"}
%s`, h.root, filepath.Join(binDir, "plugins"), h.manifests, endpoint, extra)
	if err := os.WriteFile(h.config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	h.client = localapi.NewClient(filepath.Join(h.root, "host.sock"))
	// Registered after crisetup's cleanup, so it runs before it.
	t.Cleanup(h.cleanup)
	h.start()
	return h
}

// viaProxy is a via of startPodHostVia and startKubeHostVia: a
// test/criproxy in front of the instance's socket, which it stores in
// *proxy.
func viaProxy(t *testing.T, proxy **criproxy.Proxy) func(*crisetup.Containerd) string {
	return func(c *crisetup.Containerd) string {
		p, err := criproxy.Start(t.Context(), c.Socket, filepath.Join(t.TempDir(), "cri.sock"))
		if err != nil {
			t.Fatal(err)
		}
		// Registered before the host's cleanup, so it runs after it.
		t.Cleanup(func() { _ = p.Close() })
		*proxy = p
		return "unix://" + p.Path()
	}
}

// start runs a host on the root dir and waits for its runtime plugin.
func (h *podHost) start() {
	h.t.Helper()
	h.mu.Lock()
	h.runs++
	logPath := filepath.Join(h.dir, fmt.Sprintf("host-%d.log", h.runs))
	h.logs = append(h.logs, logPath)
	h.mu.Unlock()
	f, err := os.Create(logPath)
	if err != nil {
		h.t.Fatal(err)
	}
	cmd := exec.Command(h.bin, "run", "--config", h.config)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		h.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); f.Close() }()
	h.mu.Lock()
	h.proc, h.exited = cmd, exited
	h.mu.Unlock()
	h.waitPlugin(func(p localapi.PluginInfo) bool { return p.Ready })
}

// waitPlugin waits until the containerd plugin satisfies cond and
// returns it.
func (h *podHost) waitPlugin(cond func(localapi.PluginInfo) bool) localapi.PluginInfo {
	h.t.Helper()
	var last localapi.PluginInfo
	poll(h.t, 60*time.Second, func() bool {
		p, ok := h.plugin()
		last = p
		return ok && cond(p)
	}, func() string { return fmt.Sprintf("containerd plugin: %+v\n%s", last, h.logTail()) })
	return last
}

// plugin returns the containerd plugin's info.
func (h *podHost) plugin() (localapi.PluginInfo, bool) { return h.namedPlugin("containerd") }

// kill SIGKILLs the host, as a real crash would. Its plugin ends with it
// (parent-death signal); should one survive, cleanup kills it.
func (h *podHost) kill() {
	h.t.Helper()
	if p, ok := h.plugin(); ok && p.PID != 0 {
		h.mu.Lock()
		h.orphans = append(h.orphans, p.PID)
		h.mu.Unlock()
	}
	h.mu.Lock()
	proc, exited := h.proc, h.exited
	h.proc = nil
	h.mu.Unlock()
	if proc == nil {
		h.t.Fatal("kill: no host running")
	}
	if err := proc.Process.Kill(); err != nil {
		h.t.Fatal(err)
	}
	<-exited
}

// cleanup stops the running host with SIGTERM (SIGKILL after 30 s) and
// kills plugins orphaned by earlier SIGKILLs.
func (h *podHost) cleanup() {
	h.mu.Lock()
	proc, exited, orphans := h.proc, h.exited, h.orphans
	h.proc = nil
	h.mu.Unlock()
	if proc != nil {
		_ = proc.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			h.t.Errorf("host did not stop within 30 s of SIGTERM")
			_ = proc.Process.Kill()
			<-exited
		}
	}
	for _, pid := range orphans {
		if processAlive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	unmountRoot(h.root)
	if h.t.Failed() {
		h.t.Log(h.logTail())
	}
}

// unmountRoot undoes the bind mount a host makes of its root dir to make
// it a shared mount (hostvolumes.MakeRShared, as the kubelet does), so
// that the test's temporary directory can be removed. A root that is no
// mount point is left alone.
func unmountRoot(root string) { _ = syscall.Unmount(root, syscall.MNT_DETACH) }

// logTail is the end of the current host log.
func (h *podHost) logTail() string {
	h.mu.Lock()
	logs := slices.Clone(h.logs)
	h.mu.Unlock()
	if len(logs) == 0 {
		return ""
	}
	b, _ := os.ReadFile(logs[len(logs)-1])
	lines := strings.Split(string(b), "\n")
	if len(lines) > 80 {
		lines = lines[len(lines)-80:]
	}
	return "host log " + logs[len(logs)-1] + " (end):\n" + strings.Join(lines, "\n")
}

// hostCLI runs the host binary with args against this host's socket and
// returns its standard output.
func (h *podHost) hostCLI(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, h.bin, append(args, "--socket", filepath.Join(h.root, "host.sock"))...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("host %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// apply applies pod through the API.
func (h *podHost) apply(pod *v1.Pod) {
	h.t.Helper()
	b, err := json.Marshal(pod)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.client.Apply(h.t.Context(), b); err != nil {
		h.t.Fatalf("apply %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}

// get returns the pod as the API reports it; ok is false when it is not
// there (or the API does not answer).
func (h *podHost) get(name string) (*v1.Pod, bool) {
	ctx, cancel := context.WithTimeout(h.t.Context(), 5*time.Second)
	defer cancel()
	d, err := h.client.Pod(ctx, "default", name)
	if err != nil || d.Pod == nil {
		return nil, false
	}
	return d.Pod, true
}

// waitPod waits until the pod satisfies cond and returns it.
func (h *podHost) waitPod(name string, limit time.Duration, what string, cond func(*v1.Pod) bool) *v1.Pod {
	h.t.Helper()
	var last *v1.Pod
	poll(h.t, limit, func() bool {
		p, ok := h.get(name)
		last = p
		return ok && cond(p)
	}, func() string {
		evs, _ := h.client.Events(context.Background(), localapi.EventFilter{Kind: "Pod", Namespace: "default", Name: name})
		return fmt.Sprintf("pod %s: %s; last status %s\nruntime: %s\nevents:\n%s%s", name, what, podStatusString(last), h.criSummary(last), eventsString(evs), h.logTail())
	})
	return last
}

// waitPhase waits until the pod's phase is phase.
func (h *podHost) waitPhase(name string, phase v1.PodPhase, limit time.Duration) *v1.Pod {
	h.t.Helper()
	return h.waitPod(name, limit, "phase "+string(phase), func(p *v1.Pod) bool { return p.Status.Phase == phase })
}

// waitGone waits until the API no longer has the pod.
func (h *podHost) waitGone(name string, limit time.Duration) {
	h.t.Helper()
	poll(h.t, limit, func() bool {
		ctx, cancel := context.WithTimeout(h.t.Context(), 5*time.Second)
		defer cancel()
		_, err := h.client.Pod(ctx, "default", name)
		return err != nil && strings.Contains(err.Error(), "not found")
	}, func() string { return "pod " + name + " still listed\n" + h.logTail() })
}

// delete deletes the pod through the API, with grace when not nil.
func (h *podHost) delete(name string, grace *int64) {
	h.t.Helper()
	if _, err := h.client.Delete(h.t.Context(), "default", name, localapi.DeleteOptions{GracePeriod: grace}); err != nil {
		h.t.Fatalf("delete %s: %v", name, err)
	}
}

// events returns the pod's events.
func (h *podHost) events(name string) []localapi.Event {
	h.t.Helper()
	evs, err := h.client.Events(h.t.Context(), localapi.EventFilter{Kind: "Pod", Namespace: "default", Name: name})
	if err != nil {
		h.t.Fatalf("events of %s: %v", name, err)
	}
	return evs
}

// metric reads one counter or gauge without labels from GET /metrics.
func (h *podHost) metric(name string) (float64, error) {
	resp, err := h.scrape()
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return 0, fmt.Errorf("metric %s not in /metrics", name)
}

// scrape sends GET /metrics to the host's socket.
func (h *podHost) scrape() (*http.Response, error) {
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", filepath.Join(h.root, "host.sock"))
	}}}
	req, err := http.NewRequestWithContext(h.t.Context(), http.MethodGet, "http://host/metrics", nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

// criContainers lists the containers of a pod UID straight from
// containerd, with their status.
func (h *podHost) criContainers(uid string) []*runtimeapi.ContainerStatus {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.t.Context(), 30*time.Second)
	defer cancel()
	out, err := criContainerStatuses(ctx, h.ctrd, map[string]string{runtimemanager.LabelPodUID: uid})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// criSummary describes the pod's containers as containerd has them.
func (h *podHost) criSummary(p *v1.Pod) string {
	if p == nil {
		return "<no pod>"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := criContainerStatuses(ctx, h.ctrd, map[string]string{runtimemanager.LabelPodUID: string(p.UID)})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "\n  %s attempt %d %s exit %d started %s finished %s", c.Metadata.Name, c.Metadata.Attempt, c.State,
			c.ExitCode, time.Unix(0, c.StartedAt).Format(time.StampMilli), time.Unix(0, c.FinishedAt).Format(time.StampMilli))
	}
	return b.String()
}

// criContainerStatuses lists the containers matching labels with their
// status. A container removed between list and status is left out.
func criContainerStatuses(ctx context.Context, c *crisetup.Containerd, labels map[string]string) ([]*runtimeapi.ContainerStatus, error) {
	list, err := c.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{
		Filter: &runtimeapi.ContainerFilter{LabelSelector: labels},
	})
	if err != nil {
		return nil, fmt.Errorf("ListContainers: %w", err)
	}
	var out []*runtimeapi.ContainerStatus
	for _, ctr := range list.Containers {
		st, err := c.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: ctr.Id})
		if err != nil {
			continue
		}
		st.Status.Labels = ctr.Labels
		out = append(out, st.Status)
	}
	return out, nil
}

// criSandboxes lists the sandboxes matching labels.
func criSandboxes(ctx context.Context, c *crisetup.Containerd, labels map[string]string) ([]*runtimeapi.PodSandbox, error) {
	list, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{
		Filter: &runtimeapi.PodSandboxFilter{LabelSelector: labels},
	})
	if err != nil {
		return nil, fmt.Errorf("ListPodSandbox: %w", err)
	}
	return list.Items, nil
}

// containerPID is the host PID of a running container's process.
func (h *podHost) containerPID(id string) int {
	h.t.Helper()
	st, err := h.ctrd.Runtime.ContainerStatus(h.t.Context(), &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
	if err != nil {
		h.t.Fatalf("ContainerStatus %s: %v", id, err)
	}
	var info struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(st.Info["info"]), &info); err != nil || info.Pid <= 0 {
		h.t.Fatalf("container %s pid from verbose status: %v (info %q)", id, err, st.Info["info"])
	}
	return info.Pid
}

// busyPod is a host-network pod of busybox containers, one per command
// (named by the map key order given in names), with the restart policy.
func busyPod(name string, policy v1.RestartPolicy, containers ...v1.Container) *v1.Pod {
	for i := range containers {
		containers[i].Image = localimages.BusyboxName
		containers[i].ImagePullPolicy = v1.PullNever
	}
	return &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.PodSpec{
			HostNetwork:   true,
			RestartPolicy: policy,
			Containers:    containers,
		},
	}
}

// sh is a container running a shell script.
func sh(name, script string) v1.Container {
	return v1.Container{Name: name, Command: []string{"sh", "-c", script}}
}

// containerStatus returns the pod's status of the named container (app
// or init), or nil.
func containerStatus(p *v1.Pod, name string) *v1.ContainerStatus {
	for _, list := range [][]v1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// running reports whether the pod runs with every app container running.
func running(p *v1.Pod) bool {
	if p.Status.Phase != v1.PodRunning || len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil {
			return false
		}
	}
	return true
}

func podStatusString(p *v1.Pod) string {
	if p == nil {
		return "<none>"
	}
	b, _ := json.Marshal(p.Status)
	return string(b)
}

func eventsString(evs []localapi.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "  %s %s %s (x%d)\n", e.Type, e.Reason, e.Message, e.Count)
	}
	return b.String()
}

// hasEvent reports whether evs has an event of the reason whose message
// contains substr.
func hasEvent(evs []localapi.Event, reason, substr string) bool {
	return slices.ContainsFunc(evs, func(e localapi.Event) bool {
		return e.Reason == reason && strings.Contains(e.Message, substr)
	})
}
