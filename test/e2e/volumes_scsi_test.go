package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/localapi"
)

// scsiFake is plugins/internal/scsitest's fake tree, built and read
// through its scsifake command: a fake sysfs and /dev, a fake iscsiadm
// and multipath, and real loop devices behind the disks.
type scsiFake struct {
	t     *testing.T
	bin   string
	root  string
	state string // the plugins' state directories (scsiHost)
}

func newSCSIFake(t *testing.T) *scsiFake {
	t.Helper()
	dir := t.TempDir()
	repo, _ := filepath.Abs("../..")
	f := &scsiFake{t: t, bin: filepath.Join(dir, "scsifake"), root: filepath.Join(dir, "tree"), state: filepath.Join(dir, "state")}
	build := exec.CommandContext(t.Context(), "go", "build", "-o", f.bin, "./plugins/internal/scsitest/scsifake")
	build.Dir, build.Env = repo, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build scsifake: %v\n%s", err, out)
	}
	f.run("init")
	return f
}

func (f *scsiFake) run(args ...string) string {
	f.t.Helper()
	out, err := exec.CommandContext(f.t.Context(), f.bin, append([]string{args[0], f.root}, args[1:]...)...).CombinedOutput()
	if err != nil {
		f.t.Fatalf("scsifake %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// calls are the fake tool's calls, arguments joined by spaces.
func (f *scsiFake) calls(tool string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(f.run("calls", tool)), "\n") {
		if l != "" {
			out = append(out, strings.ReplaceAll(l, "\t", " "))
		}
	}
	return out
}

// loopDevice attaches a loop device over a sparse file of size bytes; it
// is detached at cleanup.
func loopDevice(t *testing.T, size int64) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "lun.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", dev).Run() })
	return dev
}

// scsiHost starts a host with volume-iscsi and volume-fc pointed at the
// fake tree and tools, their state directories <f.state>/iscsi and
// <f.state>/fc; fcConfig is added to volume-fc's config (", key: value").
func scsiHost(t *testing.T, f *scsiFake, fcConfig string) *podHost {
	t.Helper()
	state := f.state
	tree := fmt.Sprintf(`sysfsRoot: "%[1]s/sys", devRoot: "%[1]s/dev", multipath: "%[1]s/bin/multipath"`, f.root)
	h := startPodHostWith(t, fmt.Sprintf(`  - name: iscsi
    kind: volume
    path: volume-iscsi
    config: {%[1]s, iscsiadm: "%[2]s/bin/iscsiadm", stateDir: "%[3]s/iscsi"}
  - name: fc
    kind: volume
    path: volume-fc
    config: {%[1]s, stateDir: "%[3]s/fc"%[4]s}
`, tree, f.root, state, fcConfig))
	t.Cleanup(func() { unmountBelow(t, h.root) })
	return h
}

// runBlockPod runs a pod that reads the block claim's device, /dev/xvda,
// and checks what it sees (a block device of size bytes), the map file
// under the plugin's directory (kubernetes.io~fc) and the claim's
// capacity on /metrics. It returns the pod and its map file.
func (h *podHost) runBlockPod(t *testing.T, name, claim, pluginDir string, size int64) (*v1.Pod, string) {
	t.Helper()
	zero := int64(0)
	pod := busyPod(name, v1.RestartPolicyAlways, sh("main",
		`echo bytes=$(dd if=/dev/xvda bs=1M 2>/dev/null | wc -c); stat -c 'type=%F' /dev/xvda; exec sleep 3600`))
	pod.Spec.Volumes = []v1.Volume{volume(claim, v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}})}
	pod.Spec.Containers[0].VolumeDevices = []v1.VolumeDevice{{Name: claim, DevicePath: "/dev/xvda"}}
	pod.Spec.TerminationGracePeriodSeconds = &zero
	h.apply(pod)
	p := h.waitPod(name, 90*time.Second, "running", running)
	h.waitLog(name, "main", "type=block special file")
	h.waitLog(name, "main", fmt.Sprintf("bytes=%d", size))
	mapFile := filepath.Join(h.root, "pods", string(p.UID), "volumeDevices", pluginDir, claim)
	if mountInfo(t, mapFile) == nil {
		t.Errorf("the device file %s is not mapped", mapFile)
	}
	var got float64
	poll(t, 30*time.Second, func() bool {
		got, _ = h.labeledMetric("kubelet_volume_stats_capacity_bytes", map[string]string{"namespace": "default", "persistentvolumeclaim": claim})
		return got == float64(size)
	}, func() string {
		return fmt.Sprintf("kubelet_volume_stats_capacity_bytes of claim %s: %v; want %d\n%q", claim, got, size, h.metricLines("kubelet_volume_stats_"))
	})
	return p, mapFile
}

// TestVolumesSCSI runs the real volume-iscsi and volume-fc plugins over
// the fake tree and tools, with real loop devices behind the LUNs: a pod
// writes into an iSCSI claim, is deleted (unmounted, logged out), and a
// second pod reads the file. FC and iSCSI claims of volumeMode Block are
// devices in their pod (dd reads them whole), their capacity is on
// /metrics, and deleting the pod deletes the SCSI disk or logs out. The
// iSCSI PersistentVolume's mountOptions are those of its staging mount. An FC
// cleanup whose multipath flush fails twice completes in one Unstage
// within its budget; one that keeps failing gives up after the budget
// (FailedUnmountDevice), keeps the disks, and the next pod stages the
// device again.
func TestVolumesSCSI(t *testing.T) {
	f := newSCSIFake(t)
	const portal, iqn = "127.0.0.1:3260", "iqn.2024-01.dev.podhost:e2e"
	f.run("iscsi-target", portal, iqn, "0", loopDevice(t, 64<<20))
	f.run("fc-disk", "50060e801049cfd1", "0", "sdf", loopDevice(t, 32<<20))
	// Budget and interval short enough to run out in a test: three tries
	// a second apart.
	h := scsiHost(t, f, ", cleanupBudget: 2s, cleanupInterval: 1s")
	zero := int64(0)

	t.Run("an iSCSI file outlives its pod", func(t *testing.T) {
		h.writePVClaim("iscsi", fmt.Sprintf(`iscsi: {targetPortal: "%s", iqn: "%s", lun: 0, fsType: ext4}`, portal, iqn), false,
			"  mountOptions: [noatime, \"commit=30\"]\n")
		h.apply(claimsPod("iscsi-writer", `echo written-into-iscsi > /iscsi/file && sync && echo done; exec sleep 3600`, "iscsi"))
		w := h.waitPod("iscsi-writer", 90*time.Second, "running", running)
		h.waitLog("iscsi-writer", "main", "done")
		staging := filepath.Join(h.root, "plugins", "kubernetes.io~iscsi", "iface-default", portal+"-"+iqn+"-lun-0")
		// The PersistentVolume's mountOptions: one for the mount point,
		// one for ext4.
		if m := mountInfo(t, staging); m == nil || !slices.Contains(strings.Split(m[5], ","), "noatime") || !slices.Contains(m, "-") ||
			!slices.Contains(strings.Split(m[len(m)-1], ","), "commit=30") {
			t.Errorf("the staging path %s: mountinfo %q; want a mount point with noatime and commit=30", staging, m)
		}
		h.delete("iscsi-writer", &zero)
		h.waitGone("iscsi-writer", 60*time.Second)
		poll(t, 30*time.Second, func() bool { return strings.Contains(strings.Join(f.calls("iscsiadm"), "\n"), "--logout") },
			func() string { return fmt.Sprintf("iscsiadm calls %q; want a logout", f.calls("iscsiadm")) })
		if mountInfo(t, staging) != nil {
			t.Errorf("the staging path %s is still mounted", staging)
		}
		if _, err := os.Stat(filepath.Join(h.root, "pods", string(w.UID))); !os.IsNotExist(err) {
			t.Errorf("pod directory after delete: %v; want it gone", err)
		}

		h.apply(claimsPod("iscsi-reader", `cat /iscsi/file; exec sleep 3600`, "iscsi"))
		h.waitPod("iscsi-reader", 90*time.Second, "running", running)
		h.waitLog("iscsi-reader", "main", "written-into-iscsi")
		h.delete("iscsi-reader", &zero)
		h.waitGone("iscsi-reader", 60*time.Second)
		var logins, logouts int
		poll(t, 30*time.Second, func() bool {
			logins, logouts = 0, 0
			for _, c := range f.calls("iscsiadm") {
				logins += strings.Count(c, "--login")
				logouts += strings.Count(c, "--logout")
			}
			return logins == 2 && logouts == 2
		}, func() string {
			return fmt.Sprintf("%d logins, %d logouts; want 2 each: %q", logins, logouts, f.calls("iscsiadm"))
		})
	})

	t.Run("an FC block claim is a device with its capacity on /metrics", func(t *testing.T) {
		h.writePVClaim("disk", `fc: {targetWWNs: ["50060e801049cfd1"], lun: 0}`, true, "")
		p, mapFile := h.runBlockPod(t, "fc-block", "disk", "kubernetes.io~fc", 32<<20)
		h.delete("fc-block", &zero)
		h.waitGone("fc-block", 60*time.Second)
		poll(t, 30*time.Second, func() bool { return strings.TrimSpace(f.run("deleted", "sdf")) == "true" },
			func() string { return "sdf was not deleted through sysfs" })
		if mountInfo(t, mapFile) != nil {
			t.Errorf("the device file %s is still mapped", mapFile)
		}
		if _, err := os.Stat(filepath.Join(h.root, "pods", string(p.UID))); !os.IsNotExist(err) {
			t.Errorf("pod directory after delete: %v; want it gone", err)
		}
	})

	t.Run("an iSCSI block claim is a device with its capacity on /metrics", func(t *testing.T) {
		const blockIQN = "iqn.2024-01.dev.podhost:block"
		f.run("iscsi-target", portal, blockIQN, "0", loopDevice(t, 48<<20))
		h.writePVClaim("raw", fmt.Sprintf(`iscsi: {targetPortal: "%s", iqn: "%s", lun: 0}`, portal, blockIQN), true, "")
		seen := len(f.calls("iscsiadm"))
		p, mapFile := h.runBlockPod(t, "iscsi-block", "raw", "kubernetes.io~iscsi", 48<<20)
		staging := filepath.Join(h.root, "plugins", "kubernetes.io~iscsi", "volumeDevices", "iface-default", portal+"-"+blockIQN+"-lun-0")
		if _, err := os.Stat(staging); err != nil || mountInfo(t, staging) != nil {
			t.Errorf("the block staging directory %s: %v, mounted %v; want a directory, not mounted", staging, err, mountInfo(t, staging) != nil)
		}
		h.delete("iscsi-block", &zero)
		h.waitGone("iscsi-block", 60*time.Second)
		logout := "-m node -p " + portal + " -T " + blockIQN + " --logout -I default"
		poll(t, 30*time.Second, func() bool { return slices.Contains(f.calls("iscsiadm")[seen:], logout) },
			func() string { return fmt.Sprintf("iscsiadm calls %q; want %s", f.calls("iscsiadm")[seen:], logout) })
		if mountInfo(t, mapFile) != nil {
			t.Errorf("the device file %s is still mapped", mapFile)
		}
		if _, err := os.Stat(filepath.Join(h.root, "pods", string(p.UID))); !os.IsNotExist(err) {
			t.Errorf("pod directory after delete: %v; want it gone", err)
		}
		if m := f.calls("misuse"); len(m) > 0 {
			t.Errorf("the fake tools were used under a mount: %q", m)
		}
	})

	const wwn = "50060e801049cfd1"
	nodeEvents := func() []localapi.Event {
		evs, err := h.client.Events(t.Context(), localapi.EventFilter{Kind: "Node"})
		if err != nil {
			t.Fatalf("node events: %v", err)
		}
		return evs
	}
	// flushes are the multipath -f calls for dm.
	flushes := func(dm string) int {
		n := 0
		for _, c := range f.calls("multipath") {
			if c == "-f "+filepath.Join(f.root, "dev", dm) {
				n++
			}
		}
		return n
	}
	deleted := func(disks ...string) bool {
		for _, d := range disks {
			if strings.TrimSpace(f.run("deleted", d)) != "true" {
				return false
			}
		}
		return true
	}

	t.Run("an FC cleanup that fails twice completes within its budget", func(t *testing.T) {
		f.run("fc-multipath", wwn, "1", "dm-1", loopDevice(t, 32<<20), "sdg", "sdh")
		h.writePVClaim("retried", fmt.Sprintf(`fc: {targetWWNs: ["%s"], lun: 1, fsType: ext4}`, wwn), false, "")
		h.apply(claimsPod("fc-retried", `echo into-fc > /retried/file && sync && echo done; exec sleep 3600`, "retried"))
		h.waitPod("fc-retried", 90*time.Second, "running", running)
		h.waitLog("fc-retried", "main", "done")
		staging := filepath.Join(h.root, "plugins", "kubernetes.io~fc", wwn+"-lun-1")
		f.run("rule", "multipath", "1", "2", "map or partition in use\n", "-f")
		h.delete("fc-retried", &zero)
		h.waitGone("fc-retried", 60*time.Second)
		poll(t, 30*time.Second, func() bool { return deleted("sdg", "sdh") },
			func() string { return fmt.Sprintf("sdg and sdh not deleted; multipath calls %q", f.calls("multipath")) })
		if n := flushes("dm-1"); n != 3 {
			t.Errorf("multipath -f dm-1 called %d times; want 3 (two failures, then the flush), in one Unstage", n)
		}
		if evs := nodeEvents(); hasEvent(evs, "FailedUnmountDevice", "retried-pv") {
			t.Errorf("a FailedUnmountDevice event for a cleanup within its budget:\n%s", eventsString(evs))
		}
		if mountInfo(t, staging) != nil {
			t.Errorf("the staging path %s is still mounted", staging)
		}
	})

	t.Run("an FC cleanup that keeps failing gives up and the next pod stages the device again", func(t *testing.T) {
		f.run("fc-multipath", wwn, "2", "dm-2", loopDevice(t, 32<<20), "sdi", "sdj")
		h.writePVClaim("stuck", fmt.Sprintf(`fc: {targetWWNs: ["%s"], lun: 2, fsType: ext4}`, wwn), false, "")
		staging := filepath.Join(h.root, "plugins", "kubernetes.io~fc", wwn+"-lun-2")
		h.apply(claimsPod("fc-stuck-1", `echo from-first > /stuck/file && sync && echo done; exec sleep 3600`, "stuck"))
		h.waitPod("fc-stuck-1", 90*time.Second, "running", running)
		h.waitLog("fc-stuck-1", "main", "done")
		f.run("rule", "multipath", "1", "0", "map or partition in use\n", "-f")
		h.delete("fc-stuck-1", &zero)
		h.waitGone("fc-stuck-1", 60*time.Second)
		want := `UnmountDevice failed for volume "stuck-pv"`
		poll(t, 30*time.Second, func() bool { return hasEvent(nodeEvents(), "FailedUnmountDevice", want) },
			func() string { return "node events:\n" + eventsString(nodeEvents()) + h.logTail() })
		if n := flushes("dm-2"); n < 3 {
			t.Errorf("multipath -f dm-2 called %d times before the Unstage gave up; want 3 (the budget)", n)
		}
		for _, e := range nodeEvents() {
			if e.Reason == "FailedUnmountDevice" && (!strings.Contains(e.Message, "fc: failed to detach disk") || !strings.Contains(e.Message, "map or partition in use")) {
				t.Errorf("event %q; want the plugin's error and the tool's output in it", e.Message)
			}
		}
		if deleted("sdi") || deleted("sdj") {
			t.Errorf("a disk of dm-2 deleted by a cleanup whose flush failed")
		}

		// The device is uncertain: the next pod stages it again (a mount of
		// the same filesystem) and reads the first pod's file.
		h.apply(claimsPod("fc-stuck-2", `cat /stuck/file; exec sleep 3600`, "stuck"))
		h.waitPod("fc-stuck-2", 90*time.Second, "running", running)
		h.waitLog("fc-stuck-2", "main", "from-first")
		if n := mountCount(t, staging); n != 1 {
			t.Errorf("the staging path is mounted %d times; want once", n)
		}
		f.run("clear-rules", "multipath")
		h.delete("fc-stuck-2", &zero)
		h.waitGone("fc-stuck-2", 60*time.Second)
		poll(t, 60*time.Second, func() bool { return deleted("sdi", "sdj") && mountCount(t, staging) == 0 },
			func() string {
				return fmt.Sprintf("after the rule went: sdi/sdj deleted %v, staging mounts %d; multipath calls %q", deleted("sdi", "sdj"), mountCount(t, staging), f.calls("multipath"))
			})
		if m := f.calls("misuse"); len(m) > 0 {
			t.Errorf("the fake tools were used under a mount: %q", m)
		}
	})
}
