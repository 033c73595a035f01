package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/images/localimages"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/test/crisetup"
)

// TestPodCgroupWithContainerd runs a sandbox with a pod cgroup on the
// machine's cgroup v1 (cgroupfs driver): the pod cgroup has its limits and
// holds the sandbox's and its container's cgroups; the container's and the
// pod's limits are changed in place (the latter by a second plugin, as
// after a restart); RemoveSandbox removes the pod cgroup from every
// hierarchy once the pod's last ready sandbox goes; a bad uid or QoS class
// is refused.
func TestPodCgroupWithContainerd(t *testing.T) {
	c := crisetup.StartForTest(t)
	logs := t.TempDir()
	config := fmt.Sprintf(`{"endpoint":%q,"timeouts":{"runtime":"60s","image":"60s"}}`, c.Endpoint())
	rt := connect(t, config)
	uid := fmt.Sprintf("0b5c4e5e-%d", time.Now().UnixNano())
	podCgroup := "/kubepods/burstable/pod" + uid
	sb, sbCfg := runSandbox(t, rt, "resize", func(sb *runtimev1.SandboxConfig) {
		sb.Metadata.Uid = uid
		sb.HostNetwork = true
		sb.LogDirectory = filepath.Join(logs, uid)
		sb.CgroupParent = "/ignored"
		sb.PodCgroup = &runtimev1.PodCgroup{QosClass: "Burstable", Resources: &runtimev1.Resources{
			CpuShares: 256, CpuPeriod: 100000, CpuQuota: 200000, MemoryLimitInBytes: 256 << 20,
		}}
	})
	wantCgroupFiles(t, map[string]string{
		"cpu" + podCgroup + "/cpu.shares": "256", "cpu" + podCgroup + "/cpu.cfs_period_us": "100000",
		"cpu" + podCgroup + "/cpu.cfs_quota_us": "200000", "memory" + podCgroup + "/memory.limit_in_bytes": "268435456",
	})
	if _, err := os.Stat(filepath.Join(defaultCgroupFSRoot, "memory", podCgroup, sb)); err != nil {
		t.Errorf("the sandbox's cgroup below the pod cgroup: %v", err)
	}
	// Its QoS cgroup weighs at least its shares (other tests' burstable
	// pods may add theirs).
	if b, err := os.ReadFile(filepath.Join(defaultCgroupFSRoot, "cpu/kubepods/burstable/cpu.shares")); err != nil {
		t.Errorf("QoS cgroup: %v", err)
	} else if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || n < 256 {
		t.Errorf("cpu.shares of /kubepods/burstable: %q; want at least the pod's 256", b)
	}

	img, err := rt.EnsureImage(callCtx(t), &runtimev1.EnsureImageRequest{Image: localimages.BusyboxName, PullPolicy: runtimev1.PullPolicy_PULL_POLICY_NEVER})
	if err != nil {
		t.Fatalf("EnsureImage: %v", err)
	}
	createIn := func(sbCfg *runtimev1.SandboxConfig, name string, command ...string) string {
		resp, err := rt.CreateContainer(callCtx(t), &runtimev1.CreateContainerRequest{SandboxId: sb, SandboxConfig: sbCfg, Config: &runtimev1.ContainerConfig{
			Metadata: &runtimev1.ContainerMetadata{Name: name}, Image: img.GetImageRef(), Command: command, LogPath: name + ".log",
			Resources: &runtimev1.Resources{CpuShares: 128, CpuPeriod: 100000, CpuQuota: 50000, MemoryLimitInBytes: 64 << 20, OomScoreAdj: 500},
		}})
		if err != nil {
			t.Fatalf("CreateContainer %s: %v", name, err)
		}
		if _, err := rt.StartContainer(callCtx(t), &runtimev1.StartContainerRequest{ContainerId: resp.GetContainerId()}); err != nil {
			t.Fatalf("StartContainer %s: %v", name, err)
		}
		return resp.GetContainerId()
	}
	create := func(name string, command ...string) string {
		return createIn(sbCfg, name, command...)
	}
	app := create("app", runningCommand...)
	appCgroup := podCgroup + "/" + app
	wantCgroupFiles(t, map[string]string{"cpu" + appCgroup + "/cpu.cfs_quota_us": "50000", "memory" + appCgroup + "/memory.limit_in_bytes": "67108864"})
	// A config without pod_cgroup does not take the container out of it.
	noPodCgroup := proto.Clone(sbCfg).(*runtimev1.SandboxConfig)
	noPodCgroup.PodCgroup = nil
	other := createIn(noPodCgroup, "other", runningCommand...)
	if _, err := os.Stat(filepath.Join(defaultCgroupFSRoot, "memory", podCgroup, other)); err != nil {
		t.Errorf("a container created with a sandbox config without pod_cgroup: %v; want its cgroup below the pod cgroup", err)
	}
	_, err = rt.CreateContainer(callCtx(t), &runtimev1.CreateContainerRequest{SandboxId: sb, Config: &runtimev1.ContainerConfig{
		Metadata: &runtimev1.ContainerMetadata{Name: "no-config"}, Image: img.GetImageRef(),
	}})
	wantCode(t, "CreateContainer without the sandbox config of a sandbox with a pod cgroup", err, codes.InvalidArgument)

	t.Run("UpdateContainerResources", func(t *testing.T) {
		_, err := rt.UpdateContainerResources(callCtx(t), &runtimev1.UpdateContainerResourcesRequest{ContainerId: app, Resources: &runtimev1.Resources{
			CpuShares: 512, CpuPeriod: 100000, CpuQuota: 80000, MemoryLimitInBytes: 128 << 20,
		}})
		if err != nil {
			t.Fatalf("UpdateContainerResources: %v", err)
		}
		wantCgroupFiles(t, map[string]string{
			"cpu" + appCgroup + "/cpu.shares": "512", "cpu" + appCgroup + "/cpu.cfs_quota_us": "80000",
			"memory" + appCgroup + "/memory.limit_in_bytes": "134217728",
		})
		// Below what the container uses: CRI's error, nothing changed.
		_, err = rt.UpdateContainerResources(callCtx(t), &runtimev1.UpdateContainerResourcesRequest{ContainerId: app, Resources: &runtimev1.Resources{
			CpuShares: 2, CpuPeriod: 100000, CpuQuota: 10000, MemoryLimitInBytes: 4096,
		}})
		if code := status.Code(err); code == codes.OK || code == codes.NotFound || code == codes.FailedPrecondition {
			t.Errorf("UpdateContainerResources below usage: got %v; want the runtime's error", err)
		}
		wantCgroupFiles(t, map[string]string{
			"cpu" + appCgroup + "/cpu.shares": "512", "cpu" + appCgroup + "/cpu.cfs_quota_us": "80000",
			"memory" + appCgroup + "/memory.limit_in_bytes": "134217728",
		})
		if got := oomScoreAdjOf(t, "memory"+appCgroup); got != "500" {
			t.Errorf("oom_score_adj after the update: got %s; want 500, as created", got)
		}
		_, err = rt.UpdateContainerResources(callCtx(t), &runtimev1.UpdateContainerResourcesRequest{ContainerId: "no-such-container", Resources: &runtimev1.Resources{}})
		wantCode(t, "UpdateContainerResources of an unknown container", err, codes.NotFound)
		done := create("done", "true")
		waitExited(t, rt, done)
		_, err = rt.UpdateContainerResources(callCtx(t), &runtimev1.UpdateContainerResourcesRequest{ContainerId: done, Resources: &runtimev1.Resources{CpuShares: 2}})
		wantCode(t, "UpdateContainerResources of an exited container", err, codes.FailedPrecondition)
	})

	t.Run("UpdateSandboxResources after a restart", func(t *testing.T) {
		again := connect(t, config)
		_, err := again.UpdateSandboxResources(callCtx(t), &runtimev1.UpdateSandboxResourcesRequest{SandboxId: sb, Resources: &runtimev1.Resources{
			CpuShares: 1024, CpuPeriod: 50000, CpuQuota: 150000, MemoryLimitInBytes: 512 << 20,
		}})
		if err != nil {
			t.Fatalf("UpdateSandboxResources: %v", err)
		}
		want := map[string]string{
			"cpu" + podCgroup + "/cpu.shares": "1024", "cpu" + podCgroup + "/cpu.cfs_period_us": "50000",
			"cpu" + podCgroup + "/cpu.cfs_quota_us": "150000", "memory" + podCgroup + "/memory.limit_in_bytes": "536870912",
		}
		wantCgroupFiles(t, want)
		// Below what the pod uses: the kernel refuses, nothing changes.
		_, err = again.UpdateSandboxResources(callCtx(t), &runtimev1.UpdateSandboxResourcesRequest{SandboxId: sb, Resources: &runtimev1.Resources{
			CpuShares: 2, CpuPeriod: 100000, CpuQuota: 100000, MemoryLimitInBytes: 4096,
		}})
		if err == nil || !strings.Contains(err.Error(), "memory.limit_in_bytes") {
			t.Errorf("UpdateSandboxResources below usage: got %v; want the kernel's refusal of memory.limit_in_bytes", err)
		}
		wantCgroupFiles(t, want)
		_, err = again.UpdateSandboxResources(callCtx(t), &runtimev1.UpdateSandboxResourcesRequest{SandboxId: "no-such-sandbox", Resources: &runtimev1.Resources{}})
		wantCode(t, "UpdateSandboxResources of an unknown sandbox", err, codes.NotFound)
		plain, _ := runSandbox(t, again, "plain", func(sb *runtimev1.SandboxConfig) {
			sb.HostNetwork = true
			sb.LogDirectory = filepath.Join(logs, sb.GetMetadata().GetUid())
		})
		_, err = again.UpdateSandboxResources(callCtx(t), &runtimev1.UpdateSandboxResourcesRequest{SandboxId: plain, Resources: &runtimev1.Resources{}})
		wantCode(t, "UpdateSandboxResources of a sandbox without a pod cgroup", err, codes.FailedPrecondition)
	})

	t.Run("refused", func(t *testing.T) {
		for _, tt := range []struct{ uid, qos, want string }{
			{"../../escape", "Burstable", "pod_cgroup"},
			{"a/b", "BestEffort", "pod_cgroup"},
			{"fine-uid", "burstable", "qos_class"},
		} {
			_, err := rt.RunSandbox(callCtx(t), &runtimev1.RunSandboxRequest{Config: &runtimev1.SandboxConfig{
				Metadata:    &runtimev1.SandboxMetadata{Name: "bad", Namespace: "test", Uid: tt.uid},
				HostNetwork: true, LogDirectory: filepath.Join(logs, "bad"),
				PodCgroup: &runtimev1.PodCgroup{QosClass: tt.qos, Resources: &runtimev1.Resources{}},
			}})
			wantCode(t, fmt.Sprintf("RunSandbox uid %q qos %q", tt.uid, tt.qos), err, codes.InvalidArgument)
			if err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("RunSandbox uid %q qos %q: %v; want it to name %s", tt.uid, tt.qos, err, tt.want)
			}
		}
	})

	t.Run("containerd's cgroup driver is read", func(t *testing.T) {
		p := testPlugin(t)
		if errs := p.Configure(t.Context(), []byte(config)); len(errs) > 0 {
			t.Fatal(errs)
		}
		b, err := p.Runtime.(*server).rt.backend()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := b.rt.Status(callCtx(t), &criapi.StatusRequest{Verbose: true})
		if err != nil {
			t.Fatal(err)
		}
		if systemd, err := systemdCgroup(resp.GetInfo()["config"], ""); systemd || err != nil {
			t.Errorf("cgroup driver of the test containerd: systemd %v, %v; want cgroupfs, read from its config", systemd, err)
		}
	})

	t.Run("RemoveSandbox", func(t *testing.T) {
		// With a second sandbox of the pod (a new attempt) the pod cgroup
		// goes with the last one.
		secondCfg := proto.Clone(sbCfg).(*runtimev1.SandboxConfig)
		secondCfg.Metadata.Attempt++
		second, err := rt.RunSandbox(callCtx(t), &runtimev1.RunSandboxRequest{Config: secondCfg})
		if err != nil {
			t.Fatalf("RunSandbox of the pod's second sandbox: %v", err)
		}
		if _, err := rt.RemoveSandbox(callCtx(t), &runtimev1.RemoveSandboxRequest{SandboxId: sb}); err != nil {
			t.Fatalf("RemoveSandbox: %v", err)
		}
		if _, err := os.Stat(filepath.Join(defaultCgroupFSRoot, "memory", podCgroup, second.GetSandboxId())); err != nil {
			t.Errorf("the second sandbox's cgroup after the first's removal: %v; want it kept below the pod cgroup", err)
		}
		if _, err := rt.RemoveSandbox(callCtx(t), &runtimev1.RemoveSandboxRequest{SandboxId: second.GetSandboxId()}); err != nil {
			t.Fatalf("RemoveSandbox of the second: %v", err)
		}
		for range 2 {
			if _, err := rt.RemoveSandbox(callCtx(t), &runtimev1.RemoveSandboxRequest{SandboxId: sb}); err != nil {
				t.Fatalf("RemoveSandbox: %v", err)
			}
		}
		dirs, err := filepath.Glob(filepath.Join(defaultCgroupFSRoot, "*", podCgroup))
		if err != nil || len(dirs) > 0 {
			t.Errorf("pod cgroup after RemoveSandbox: %v (%v); want none in any hierarchy", dirs, err)
		}
	})
}

// wantCgroupFiles checks cgroup files, named below the cgroup root.
func wantCgroupFiles(t *testing.T, want map[string]string) {
	t.Helper()
	for name, value := range want {
		got, err := os.ReadFile(filepath.Join(defaultCgroupFSRoot, name))
		if err != nil || strings.TrimSpace(string(got)) != value {
			t.Errorf("%s: got %q (%v); want %s", name, got, err, value)
		}
	}
}

// oomScoreAdjOf is the OOM score adjustment of the first process of the
// cgroup dir (below the cgroup root).
func oomScoreAdjOf(t *testing.T, dir string) string {
	t.Helper()
	procs, err := os.ReadFile(filepath.Join(defaultCgroupFSRoot, dir, "cgroup.procs"))
	pids := strings.Fields(string(procs))
	if err != nil || len(pids) == 0 {
		t.Fatalf("processes of %s: %q (%v)", dir, procs, err)
	}
	adj, err := os.ReadFile(filepath.Join("/proc", pids[0], "oom_score_adj"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(adj))
}

func wantCode(t *testing.T, what string, err error, want codes.Code) {
	t.Helper()
	if status.Code(err) != want {
		t.Errorf("%s: got %v; want %v", what, err, want)
	}
}
