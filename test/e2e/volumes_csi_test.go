package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/podhost/podhost/host/runtimemanager"
)

const loopDriver = "loop.csi.podhost.dev"

// loopDriverProc is csi-loopdriver run as a real process on a socket.
type loopDriverProc struct {
	endpoint, stateDir, callLog string
	// config, base and log are the config file, its fields before the
	// faults, and the driver's log; pid is the process's.
	config, base, log string
	pid               int
}

// startLoopDriver builds and starts csi-loopdriver in dir; it is stopped,
// and the loop devices of its images detached, at cleanup.
func startLoopDriver(t *testing.T) *loopDriverProc {
	t.Helper()
	return startLoopDriverWith(t, "")
}

// startLoopDriverWith is startLoopDriver with extra top-level fields in
// the driver's config (capabilities, driverName, faults).
func startLoopDriverWith(t *testing.T, extra string) *loopDriverProc {
	t.Helper()
	dir, err := os.MkdirTemp("", "loopdrv")
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := filepath.Abs("../..")
	bin := filepath.Join(dir, "csi-loopdriver")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/csi-loopdriver")
	build.Dir, build.Env = repo, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build csi-loopdriver: %v\n%s", err, out)
	}
	d := &loopDriverProc{endpoint: filepath.Join(dir, "csi.sock"), stateDir: filepath.Join(dir, "state"), callLog: filepath.Join(dir, "calls.jsonl")}
	cfg := filepath.Join(dir, "config.yaml")
	d.config, d.log = cfg, filepath.Join(dir, "driver.log")
	d.base = fmt.Sprintf("endpoint: unix://%s\nstateDir: %s\nnodeID: node-1\ncallLog: %s\ndefaultVolumeSize: 64Mi\n", d.endpoint, d.stateDir, d.callLog)
	if err := os.WriteFile(cfg, []byte(d.base+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(d.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-config", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.pid = cmd.Process.Pid
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		logf.Close()
		// What the host failed to unstage (a failed test) must not stay.
		d.detachLoops()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("driver log:\n%s", b)
		} else {
			os.RemoveAll(dir)
		}
	})
	poll(t, 30*time.Second, func() bool { _, err := os.Stat(d.endpoint); return err == nil }, func() string { return "the driver's socket" })
	return d
}

// detachLoops detaches the loop devices of the driver's images, as a
// reboot does.
func (d *loopDriverProc) detachLoops() {
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.HasPrefix(string(b), d.stateDir+"/") {
			_ = exec.Command("losetup", "-d", "/dev/"+filepath.Base(filepath.Dir(filepath.Dir(f)))).Run()
		}
	}
}

// unmountBelow detaches every mount below dir, deepest first.
func unmountBelow(t *testing.T, dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Error(err)
		return
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			points = append(points, f[4])
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
			t.Errorf("cleanup: unmount %s: %v", p, err)
		}
	}
}

// createVolume makes a 64 MiB volume through the driver's controller and
// returns its ID, as a provisioner would.
func (d *loopDriverProc) createVolume(t *testing.T, name string) string {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+d.endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	resp, err := csi.NewControllerClient(conn).CreateVolume(t.Context(), &csi.CreateVolumeRequest{
		Name: name, CapacityRange: &csi.CapacityRange{RequiredBytes: 64 << 20},
		VolumeCapabilities: []*csi.VolumeCapability{{
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
			AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		}},
	})
	if err != nil {
		t.Fatalf("CreateVolume: %v", err)
	}
	return resp.GetVolume().GetVolumeId()
}

// callRecord is one line of the driver's call log.
type callRecord struct {
	RPC, Code         string
	TargetPath        string            `json:"target_path"`
	StagingTargetPath string            `json:"staging_target_path"`
	VolumeContext     map[string]string `json:"volume_context"`
	SecretKeys        []string          `json:"secret_keys"`
}

// records are the driver's call log, every call.
func (d *loopDriverProc) records(t *testing.T) []callRecord {
	t.Helper()
	f, err := os.Open(d.callLog)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []callRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c callRecord
		if json.Unmarshal(sc.Bytes(), &c) == nil {
			out = append(out, c)
		}
	}
	return out
}

// calls are the RPCs of the driver's call log, with their codes.
func (d *loopDriverProc) calls(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, c := range d.records(t) {
		if strings.HasPrefix(c.RPC, "Node") && !strings.HasPrefix(c.RPC, "NodeGet") {
			out = append(out, c.RPC+" "+c.Code)
		}
	}
	return out
}

// TestVolumesCSI runs the real loop driver behind the real volume-csi
// plugin: a pod writes a file into a CSI volume (a static
// PersistentVolume and claim), is deleted (unpublished, unstaged), and a
// second pod reads the file. A pod whose CSI driver no plugin serves
// stays Pending with FailedMount naming the driver. A host killed under a
// pod with a CSI volume neither stages nor publishes it again.
func TestVolumesCSI(t *testing.T) {
	d := startLoopDriver(t)
	id := d.createVolume(t, "e2e-data")
	h := startPodHostWith(t, fmt.Sprintf(`  - name: csi
    kind: volume
    path: volume-csi
    config: {drivers: [{name: %s, endpoint: "unix://%s"}], stateDir: "%s"}
`, loopDriver, d.endpoint, filepath.Join(t.TempDir(), "volume-csi")))
	// Runs before the root dir is removed: what a failed test left mounted
	// must not keep it busy.
	t.Cleanup(func() { unmountBelow(t, h.root) })
	h.writeManifest("data-pv.yaml", fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: data-pv}
spec:
  capacity: {storage: 64Mi}
  accessModes: [ReadWriteOnce]
  csi: {driver: %s, volumeHandle: %s, fsType: ext4}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  volumeName: data-pv
  resources: {requests: {storage: 64Mi}}
`, loopDriver, id))
	zero := int64(0)
	claimPod := func(name, script string) *v1.Pod {
		pod := busyPod(name, v1.RestartPolicyAlways, sh("main", script))
		pod.Spec.Volumes = []v1.Volume{volume("data", v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}})}
		pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}}
		pod.Spec.TerminationGracePeriodSeconds = &zero
		return pod
	}

	t.Run("a file outlives its pod", func(t *testing.T) {
		h.apply(claimPod("csi-writer", `echo written-into-csi > /data/file && sync && echo done; exec sleep 3600`))
		w := h.waitPod("csi-writer", 90*time.Second, "running", running)
		h.waitLog("csi-writer", "main", "done")
		target := filepath.Join(h.root, "pods", string(w.UID), "volumes", "kubernetes.io~csi", "data", "mount")
		if mountInfo(t, target) == nil {
			t.Errorf("the target %s is not a mount point", target)
		}
		h.delete("csi-writer", &zero)
		h.waitGone("csi-writer", 60*time.Second)
		poll(t, 30*time.Second, func() bool {
			c := strings.Join(d.calls(t), ",")
			return strings.Contains(c, "NodeUnpublishVolume OK") && strings.Contains(c, "NodeUnstageVolume OK")
		}, func() string { return fmt.Sprintf("driver calls %q; want unpublish and unstage", d.calls(t)) })
		if mountInfo(t, target) != nil {
			t.Errorf("the target %s is still mounted", target)
		}
		if _, err := os.Stat(filepath.Join(h.root, "pods", string(w.UID))); !os.IsNotExist(err) {
			t.Errorf("pod directory after delete: %v; want it gone", err)
		}

		h.apply(claimPod("csi-reader", `cat /data/file; exec sleep 3600`))
		h.waitPod("csi-reader", 90*time.Second, "running", running)
		h.waitLog("csi-reader", "main", "written-into-csi")
		h.delete("csi-reader", &zero)
		h.waitGone("csi-reader", 60*time.Second)
		// The device is unstaged once no pod uses it, after the pod is gone.
		want := "NodeStageVolume OK,NodePublishVolume OK,NodeUnpublishVolume OK,NodeUnstageVolume OK"
		poll(t, 30*time.Second, func() bool { return strings.Join(d.calls(t), ",") == want+","+want },
			func() string { return fmt.Sprintf("driver calls %q; want %s twice", d.calls(t), want) })
	})

	// The PersistentVolume has an fsType and ReadWriteOnce, and the loop
	// driver no CSIDriver object: the default fsGroupPolicy gives the
	// volume to the pod's fsGroup, so uid 1000 may write into the root
	// that mkfs left root's and 0755, and what is there (the file of the
	// first pod) belongs to the group too.
	t.Run("fsGroup owns the volume", func(t *testing.T) {
		seen := len(d.calls(t))
		pod := claimPod("csi-fsgroup", `touch /data/by-1000 && echo "root=$(stat -c %A:%g /data) new=$(stat -c %g /data/by-1000) old=$(stat -c %g /data/file)"; exec sleep 3600`)
		pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](1234)}
		h.apply(pod)
		h.waitPod("csi-fsgroup", 90*time.Second, "running", running)
		h.waitLog("csi-fsgroup", "main", "root=drwxrwsr-x:1234 new=1234 old=1234")
		h.delete("csi-fsgroup", &zero)
		h.waitGone("csi-fsgroup", 60*time.Second)
		// The unstage follows the pod's end; the next case counts calls.
		want := "NodeStageVolume OK,NodePublishVolume OK,NodeUnpublishVolume OK,NodeUnstageVolume OK"
		poll(t, 30*time.Second, func() bool { return strings.Join(d.calls(t)[seen:], ",") == want },
			func() string { return fmt.Sprintf("driver calls %q; want %s", d.calls(t)[seen:], want) })
	})

	t.Run("a host restart keeps the mounts", func(t *testing.T) {
		seen := len(d.calls(t))
		h.apply(claimPod("csi-kept", `echo alive; exec sleep 3600`))
		before := h.waitPod("csi-kept", 90*time.Second, "running", running)
		h.kill()
		h.start()
		after := h.waitPod("csi-kept", 60*time.Second, "running", running)
		if a, b := containerStatus(after, "main"), containerStatus(before, "main"); a == nil || b == nil || a.ContainerID != b.ContainerID {
			t.Errorf("container after the restart %+v; want the one from before", a)
		}
		// A few seconds for a wrong re-stage or teardown to show.
		time.Sleep(3 * time.Second)
		if got := strings.Join(d.calls(t)[seen:], ","); got != "NodeStageVolume OK,NodePublishVolume OK" {
			t.Errorf("driver calls over the restart %s; want one stage and one publish", got)
		}
		h.delete("csi-kept", &zero)
		h.waitGone("csi-kept", 60*time.Second)
		want := "NodeStageVolume OK,NodePublishVolume OK,NodeUnpublishVolume OK,NodeUnstageVolume OK"
		poll(t, 30*time.Second, func() bool { return strings.Join(d.calls(t)[seen:], ",") == want },
			func() string { return fmt.Sprintf("driver calls %q; want %s", d.calls(t)[seen:], want) })
	})

	// Issue 23 item 7: a node that rebooted under a pod lost its
	// containers, mounts and loop devices, and containerd started again;
	// the host, started on the same state, must stage and publish the
	// volume again before the pod's new container runs, so that the pod
	// finds its data and writes into the volume, not the root disk.
	t.Run("a simulated reboot", func(t *testing.T) {
		h.apply(claimPod("csi-reboot", `echo "before=$(cat /data/reboot 2>/dev/null)"; echo kept-over-reboot > /data/reboot && sync && echo written; exec sleep 3600`))
		p := h.waitPod("csi-reboot", 90*time.Second, "running", running)
		h.waitLog("csi-reboot", "main", "written")
		target := filepath.Join(h.root, "pods", string(p.UID), "volumes", "kubernetes.io~csi", "data", "mount")
		before := containerStatus(p, "main")
		h.kill()
		seen := len(d.calls(t))
		ctx := t.Context()
		boxes, err := criSandboxes(ctx, h.ctrd, map[string]string{runtimemanager.LabelPodUID: string(p.UID)})
		if err != nil || len(boxes) == 0 {
			t.Fatalf("sandboxes of the pod: %v %v", boxes, err)
		}
		for _, b := range boxes {
			if _, err := h.ctrd.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: b.Id}); err != nil {
				t.Fatalf("StopPodSandbox: %v", err)
			}
		}
		if err := h.ctrd.Restart(ctx, func() {
			unmountBelow(t, h.root)
			d.detachLoops()
		}); err != nil {
			t.Fatal(err)
		}
		if mountInfo(t, target) != nil {
			t.Fatal("the target is still mounted after the simulated reboot")
		}
		h.start()
		h.waitPod("csi-reboot", 90*time.Second, "running again", func(p *v1.Pod) bool {
			c := containerStatus(p, "main")
			return running(p) && c != nil && before != nil && c.ContainerID != before.ContainerID
		})
		h.waitLog("csi-reboot", "main", "before=kept-over-reboot")
		if mountInfo(t, target) == nil {
			t.Errorf("the target %s is not a mount point after the reboot", target)
		}
		if got := strings.Join(d.calls(t)[seen:], ","); got != "NodeStageVolume OK,NodePublishVolume OK" {
			t.Errorf("driver calls after the reboot %s; want one stage and one publish", got)
		}
		h.delete("csi-reboot", &zero)
		h.waitGone("csi-reboot", 60*time.Second)
		want := "NodeStageVolume OK,NodePublishVolume OK,NodeUnpublishVolume OK,NodeUnstageVolume OK"
		poll(t, 30*time.Second, func() bool { return strings.Join(d.calls(t)[seen:], ",") == want },
			func() string { return fmt.Sprintf("driver calls %q; want %s", d.calls(t)[seen:], want) })
	})

	// Issue 23 item 2: the pod went with state.db, so the host stops it as
	// an orphan; its volume, which the plugin recorded and vol_data.json
	// names, is unpublished and unstaged through the driver.
	t.Run("state.db lost under a pod with a CSI volume", func(t *testing.T) {
		seen := len(d.calls(t))
		h.apply(claimPod("csi-lost", `echo alive; exec sleep 3600`))
		p := h.waitPod("csi-lost", 90*time.Second, "running", running)
		target := filepath.Join(h.root, "pods", string(p.UID), "volumes", "kubernetes.io~csi", "data", "mount")
		h.kill()
		if err := os.Remove(filepath.Join(h.root, "state.db")); err != nil {
			t.Fatal(err)
		}
		h.start()
		want := "NodeStageVolume OK,NodePublishVolume OK,NodeUnpublishVolume OK,NodeUnstageVolume OK"
		poll(t, 90*time.Second, func() bool { return strings.Join(d.calls(t)[seen:], ",") == want },
			func() string {
				return fmt.Sprintf("driver calls %q; want %s\n%s", d.calls(t)[seen:], want, h.logTail())
			})
		if mountInfo(t, target) != nil || mountsBelow(t, h.root) != 0 {
			t.Errorf("mounts left below the root: %d", mountsBelow(t, h.root))
		}
		poll(t, 30*time.Second, func() bool {
			_, err := os.Stat(filepath.Join(h.root, "pods", string(p.UID)))
			return os.IsNotExist(err)
		}, func() string { return "the orphan's pod directory is still there\n" + h.logTail() })
	})

	// Issue 23 item 1, against a driver with an inline mode as the
	// hostpath driver's: never staged, published with the ephemeral
	// attribute and the pod's volumeAttributes, a real filesystem of the
	// asked size, and nothing of it left after the pod.
	t.Run("an inline ephemeral volume", func(t *testing.T) {
		seen := len(d.calls(t))
		pod := busyPod("csi-inline", v1.RestartPolicyAlways, sh("main",
			`echo inline > /scratch/f && echo "size=$(df -m /scratch | awk 'NR==2 {print $2}') $(cat /scratch/f)"; exec sleep 3600`))
		pod.Spec.Volumes = []v1.Volume{volume("scratch", v1.VolumeSource{CSI: &v1.CSIVolumeSource{
			Driver: loopDriver, VolumeAttributes: map[string]string{"size": "48Mi"},
		}})}
		pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
		pod.Spec.TerminationGracePeriodSeconds = &zero
		h.apply(pod)
		p := h.waitPod("csi-inline", 90*time.Second, "running", running)
		// ext4 on 48 MiB leaves a little less than 48 MiB of blocks.
		h.waitLog("csi-inline", "main", "inline")
		if logs := h.logsOf("csi-inline", "main"); !strings.Contains(logs, "size=4") || !strings.Contains(logs, " inline") {
			t.Errorf("pod log %q; want the 48 MiB volume's size and the file", logs)
		}
		target := filepath.Join(h.root, "pods", string(p.UID), "volumes", "kubernetes.io~csi", "scratch", "mount")
		if mountInfo(t, target) == nil {
			t.Errorf("the target %s is not a mount point", target)
		}
		h.delete("csi-inline", &zero)
		h.waitGone("csi-inline", 60*time.Second)
		want := "NodePublishVolume OK,NodeUnpublishVolume OK"
		poll(t, 30*time.Second, func() bool { return strings.Join(d.calls(t)[seen:], ",") == want },
			func() string { return fmt.Sprintf("driver calls %q; want %s", d.calls(t)[seen:], want) })
		for _, c := range d.records(t) {
			if c.RPC == "NodePublishVolume" && c.TargetPath == target &&
				(c.StagingTargetPath != "" || c.VolumeContext["csi.storage.k8s.io/ephemeral"] != "true" || c.VolumeContext["size"] != "48Mi") {
				t.Errorf("inline publish %+v; want no staging path, the ephemeral attribute and the pod's size", c)
			}
		}
		if mountInfo(t, target) != nil {
			t.Errorf("the target %s is still mounted", target)
		}
		imgs, _ := filepath.Glob(filepath.Join(d.stateDir, "volumes", "*.img"))
		if len(imgs) != 1 || filepath.Base(imgs[0]) != id+".img" {
			t.Errorf("volume images after the inline pod: %v; want only the claim's %s", imgs, id)
		}
	})

	// An inline volume's nodePublishSecretRef, as the kubelet reads it:
	// the Secret of the pod's namespace, its data the secrets of
	// NodePublishVolume (the driver denies a publish without its
	// password). Missing, it keeps the pod in ContainerCreating
	// with FailedMount naming it; once it is defined, the retried mount
	// finds it and the pod starts. No value is in a log or an event.
	t.Run("an inline volume with a publish secret", func(t *testing.T) {
		seen := len(d.calls(t))
		pod := busyPod("csi-secret", v1.RestartPolicyAlways, sh("main", `echo mounted; exec sleep 3600`))
		pod.Spec.Volumes = []v1.Volume{volume("scratch", v1.VolumeSource{CSI: &v1.CSIVolumeSource{
			Driver: loopDriver, VolumeAttributes: map[string]string{"size": "16Mi", "requiredSecret": "password"}, NodePublishSecretRef: &v1.LocalObjectReference{Name: "csi-creds"},
		}})}
		pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
		pod.Spec.TerminationGracePeriodSeconds = &zero
		h.apply(pod)
		poll(t, 60*time.Second, func() bool {
			return hasEvent(h.events("csi-secret"), "FailedMount", "fetching NodePublishSecretRef default/csi-creds failed")
		}, func() string { return "events:\n" + eventsString(h.events("csi-secret")) + h.logTail() })
		if p, ok := h.get("csi-secret"); !ok || !containerWaiting(p) {
			t.Errorf("pod %s; want Pending in ContainerCreating", podStatusString(p))
		}
		if got := d.calls(t)[seen:]; len(got) != 0 {
			t.Errorf("driver calls without the secret %q; want none", got)
		}
		h.writeManifest("csi-creds.yaml", `apiVersion: v1
kind: Secret
metadata: {name: csi-creds, namespace: default}
stringData: {username: csi-user-value, password: csi-password-value}
`)
		p := h.waitPod("csi-secret", 150*time.Second, "running", running)
		h.waitLog("csi-secret", "main", "mounted")
		target := filepath.Join(h.root, "pods", string(p.UID), "volumes", "kubernetes.io~csi", "scratch", "mount")
		var keys []string
		for _, c := range d.records(t) {
			if c.RPC == "NodePublishVolume" && c.TargetPath == target && c.Code == "OK" {
				keys = c.SecretKeys
			}
		}
		if !slices.Equal(keys, []string{"password", "username"}) {
			t.Errorf("secret keys of the publish %q; want [password username]", keys)
		}
		h.delete("csi-secret", &zero)
		h.waitGone("csi-secret", 60*time.Second)
		h.mu.Lock()
		logs := append(slices.Clone(h.logs), d.log, d.callLog)
		h.mu.Unlock()
		for _, f := range logs {
			if b, _ := os.ReadFile(f); strings.Contains(string(b), "csi-password-value") || strings.Contains(string(b), "csi-user-value") {
				t.Errorf("%s holds a secret's value", f)
			}
		}
		if ev := eventsString(h.events("csi-secret")); strings.Contains(ev, "csi-password-value") || strings.Contains(ev, "csi-user-value") {
			t.Errorf("events hold a secret's value:\n%s", ev)
		}
	})

	t.Run("a driver no plugin serves", func(t *testing.T) {
		pod := busyPod("csi-nodriver", v1.RestartPolicyAlways, sh("main", "exec sleep 3600"))
		pod.Spec.Volumes = []v1.Volume{volume("scratch", v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "nfs.example.com"}})}
		pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
		pod.Spec.TerminationGracePeriodSeconds = &zero
		h.apply(pod)
		poll(t, 30*time.Second, func() bool {
			return hasEvent(h.events("csi-nodriver"), "FailedMount", `csi driver "nfs.example.com"`)
		}, func() string { return "events:\n" + eventsString(h.events("csi-nodriver")) + h.logTail() })
		if p, ok := h.get("csi-nodriver"); !ok || p.Status.Phase != v1.PodPending {
			t.Errorf("pod %s; want Pending", podStatusString(p))
		}
		h.delete("csi-nodriver", &zero)
		h.waitGone("csi-nodriver", 60*time.Second)
	})
}
