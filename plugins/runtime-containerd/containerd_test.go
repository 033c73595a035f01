package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podhost/podhost/images/localimages"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/sdk"
	"github.com/podhost/podhost/sdk/runtimetest"
	"github.com/podhost/podhost/test/crisetup"
)

// These tests run the plugin against a private containerd (test/crisetup).
// They need root and the packages of hack/install-deps.sh, and fail, never
// skip, without them. One containerd serves every subtest.

// callTimeout bounds each call of the tests; the machines are slow and
// shared.
const callTimeout = 60 * time.Second

// runningCommand keeps a busybox container running until it is stopped.
var runningCommand = []string{"sh", "-c", `trap "exit 0" TERM; while true; do sleep 1; done`}

func TestWithContainerd(t *testing.T) {
	c := crisetup.StartForTest(t, crisetup.WithPodNetwork())
	logs := t.TempDir()
	config := fmt.Sprintf(`{"endpoint":%q,"timeouts":{"runtime":"60s","image":"60s"}}`, c.Endpoint())
	hostNetwork := func(sb *runtimev1.SandboxConfig) {
		sb.HostNetwork = true
		sb.LogDirectory = filepath.Join(logs, sb.GetMetadata().GetUid())
	}

	t.Run("conformance", func(t *testing.T) {
		runtimetest.Run(t, func(t *testing.T) runtimetest.Setup {
			return runtimetest.Setup{
				Plugin:       testPlugin(t),
				Config:       config,
				Image:        localimages.BusyboxName,
				Sandbox:      hostNetwork,
				Container:    func(c *runtimev1.ContainerConfig) { c.Command = runningCommand },
				ExecSucceeds: []string{"true"},
				ExecFails:    []string{"sh", "-c", "exit 3"},
				CallTimeout:  callTimeout,
			}
		})
	})
	t.Run("exit code and log", func(t *testing.T) {
		testExitCodeAndLog(t, connect(t, config), hostNetwork)
	})
	t.Run("events of changes made by others", func(t *testing.T) {
		testEventsOfOthers(t, connect(t, config), c, hostNetwork)
	})
	t.Run("pod IP in list and status", func(t *testing.T) {
		testPodIPListed(t, connect(t, config), c, logs)
	})
}

// testPodIPListed runs a sandbox on the pod network: ListSandboxes reports
// the IP SandboxStatus does, an address of the pod subnet (CRI's
// ListPodSandbox carries none), and a host-network sandbox has none.
func testPodIPListed(t *testing.T, rt runtimev1.RuntimeClient, c *crisetup.Containerd, logs string) {
	ctx := callCtx(t)
	run := func(name string, hostNetwork bool) string {
		resp, err := rt.RunSandbox(ctx, &runtimev1.RunSandboxRequest{Config: &runtimev1.SandboxConfig{
			Metadata:    &runtimev1.SandboxMetadata{Name: name, Namespace: "default", Uid: name + "-uid"},
			Labels:      map[string]string{"test": "podip"},
			HostNetwork: hostNetwork, LogDirectory: filepath.Join(logs, name),
		}})
		if err != nil {
			t.Fatalf("RunSandbox %s: %v", name, err)
		}
		t.Cleanup(func() {
			_, _ = rt.RemoveSandbox(context.Background(), &runtimev1.RemoveSandboxRequest{SandboxId: resp.GetSandboxId()})
		})
		return resp.GetSandboxId()
	}
	pod, host := run("podnet", false), run("hostnet", true)
	st, err := rt.SandboxStatus(ctx, &runtimev1.SandboxStatusRequest{SandboxId: pod})
	if err != nil {
		t.Fatal(err)
	}
	ip := st.GetSandbox().GetIp()
	if addr, err := netip.ParseAddr(ip); err != nil || !c.PodSubnet.Contains(addr) {
		t.Fatalf("SandboxStatus ip %q; want an address of %v", ip, c.PodSubnet)
	}
	list, err := rt.ListSandboxes(ctx, &runtimev1.ListSandboxesRequest{Filter: &runtimev1.SandboxFilter{LabelSelector: map[string]string{"test": "podip"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, sb := range list.GetSandboxes() {
		got[sb.GetId()] = sb.GetIp()
	}
	if got[pod] != ip || got[host] != "" || len(got) != 2 {
		t.Errorf("ListSandboxes ips %v; want %s: %q and %s: none", got, pod, ip, host)
	}
}

// testPlugin is a fresh plugin, closed when t ends.
func testPlugin(t *testing.T) sdk.Plugin {
	p := newPlugin("test")
	t.Cleanup(func() { _ = p.Runtime.(*server).rt.Close() })
	return p
}

// connect serves a configured plugin in process and returns its client.
func connect(t *testing.T, config string) runtimev1.RuntimeClient {
	p := testPlugin(t)
	if errs := p.Configure(t.Context(), []byte(config)); len(errs) > 0 {
		t.Fatalf("Configure: %v", errs)
	}
	return serve(t, p)
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	t.Cleanup(cancel)
	return ctx
}

// runSandbox runs a sandbox removed when t ends.
func runSandbox(t *testing.T, rt runtimev1.RuntimeClient, name string, adjust func(*runtimev1.SandboxConfig)) (string, *runtimev1.SandboxConfig) {
	t.Helper()
	cfg := &runtimev1.SandboxConfig{
		Metadata: &runtimev1.SandboxMetadata{Name: name, Namespace: "test", Uid: fmt.Sprintf("%s-%d", name, time.Now().UnixNano()), Attempt: 1},
		Labels:   map[string]string{"podhost.io/test": t.Name()},
	}
	adjust(cfg)
	resp, err := rt.RunSandbox(callCtx(t), &runtimev1.RunSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatalf("RunSandbox: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		if _, err := rt.RemoveSandbox(ctx, &runtimev1.RemoveSandboxRequest{SandboxId: resp.GetSandboxId()}); err != nil {
			t.Errorf("RemoveSandbox: %v", err)
		}
	})
	return resp.GetSandboxId(), cfg
}

// waitExited polls ContainerStatus until the container has exited.
func waitExited(t *testing.T, rt runtimev1.RuntimeClient, id string) *runtimev1.Container {
	t.Helper()
	deadline := time.Now().Add(callTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := rt.ContainerStatus(callCtx(t), &runtimev1.ContainerStatusRequest{ContainerId: id})
		if err != nil {
			t.Fatalf("ContainerStatus: %v", err)
		}
		if c := resp.GetContainer(); c.GetState() == runtimev1.ContainerState_CONTAINER_STATE_EXITED {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s did not exit within %v: %v", id, callTimeout, resp.GetContainer())
		}
		<-tick.C
	}
}

// createAndStart creates and starts a busybox container running command.
func createAndStart(t *testing.T, rt runtimev1.RuntimeClient, sandbox string, sbCfg *runtimev1.SandboxConfig, name string, command ...string) string {
	t.Helper()
	img, err := rt.EnsureImage(callCtx(t), &runtimev1.EnsureImageRequest{Image: localimages.BusyboxName, PullPolicy: runtimev1.PullPolicy_PULL_POLICY_NEVER})
	if err != nil {
		t.Fatalf("EnsureImage: %v", err)
	}
	resp, err := rt.CreateContainer(callCtx(t), &runtimev1.CreateContainerRequest{
		SandboxId:     sandbox,
		SandboxConfig: sbCfg,
		Config: &runtimev1.ContainerConfig{
			Metadata: &runtimev1.ContainerMetadata{Name: name},
			Image:    img.GetImageRef(),
			Command:  command,
			Envs:     []*runtimev1.KeyValue{{Key: "GREETING", Value: "hi"}},
			Labels:   map[string]string{"podhost.io/container": name},
			LogPath:  name + ".log",
		},
	})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if _, err := rt.StartContainer(callCtx(t), &runtimev1.StartContainerRequest{ContainerId: resp.GetContainerId()}); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	return resp.GetContainerId()
}

func testExitCodeAndLog(t *testing.T, rt runtimev1.RuntimeClient, adjust func(*runtimev1.SandboxConfig)) {
	sb, sbCfg := runSandbox(t, rt, "exit", adjust)
	id := createAndStart(t, rt, sb, sbCfg, "app", "sh", "-c", `echo "$GREETING"; exit 7`)
	c := waitExited(t, rt, id)
	if c.GetExitCode() != 7 || c.GetSandboxId() != sb || c.GetFinishedAt() < c.GetStartedAt() || c.GetStartedAt() <= 0 {
		t.Errorf("exited container: got exit code %d sandbox %q started %d finished %d; want 7, %q, in order", c.GetExitCode(), c.GetSandboxId(), c.GetStartedAt(), c.GetFinishedAt(), sb)
	}
	if want := filepath.Join(sbCfg.GetLogDirectory(), "app.log"); c.GetLogPath() != want {
		t.Errorf("log path: got %q; want %q", c.GetLogPath(), want)
	}
	// CRI log lines read "TIME stdout F hi"; the file is complete once the
	// container has exited.
	log, err := os.ReadFile(c.GetLogPath())
	if err != nil || !strings.Contains(string(log), " stdout F hi\n") {
		t.Errorf("log %s: got %q (%v); want a line with hi", c.GetLogPath(), log, err)
	}
	if want := map[string]string{"podhost.io/container": "app"}; len(c.GetLabels()) != 1 || c.GetLabels()["podhost.io/container"] != "app" {
		t.Errorf("labels: got %v; want %v, the plugin's own stripped", c.GetLabels(), want)
	}
}
