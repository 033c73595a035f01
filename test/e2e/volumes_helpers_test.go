package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/localapi"
)

// logCount is how many lines of the driver's log hold every one of subs.
func (d *loopDriverProc) logCount(t *testing.T, subs ...string) int {
	t.Helper()
	b, _ := os.ReadFile(d.log)
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all && len(subs) > 0 {
			n++
		}
	}
	return n
}

// setFaults writes the driver's config with faults (YAML list items,
// empty for none) and makes it read them again (SIGHUP).
func (d *loopDriverProc) setFaults(t *testing.T, faults string) {
	t.Helper()
	before := d.logCount(t, "faults reloaded")
	cfg := d.base
	if faults != "" {
		cfg += "faults:\n" + faults
	}
	if err := os.WriteFile(d.config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(d.pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	poll(t, 10*time.Second, func() bool { return d.logCount(t, "faults reloaded") > before }, func() string { return "the driver did not reload its faults" })
}

// waitFaults waits until n faults of rpc have applied.
func (d *loopDriverProc) waitFaults(t *testing.T, rpc string, n int) {
	t.Helper()
	poll(t, 60*time.Second, func() bool { return d.logCount(t, `msg="fault applied"`, "rpc="+rpc) >= n },
		func() string { return fmt.Sprintf("fewer than %d faults of %s; calls %q", n, rpc, d.calls(t)) })
}

// loopDevices is how many loop devices hold an image of the driver.
func (d *loopDriverProc) loopDevices() int {
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	n := 0
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.HasPrefix(string(b), d.stateDir+"/") {
			n++
		}
	}
	return n
}

// csiHost starts a host whose volume-csi plugin serves the drivers, each
// "name=endpoint", with a deadline of timeout on every CSI call (empty:
// the default).
func csiHost(t *testing.T, timeout string, drivers ...string) *podHost {
	t.Helper()
	var list []string
	for _, d := range drivers {
		name, endpoint, _ := strings.Cut(d, "=")
		entry := fmt.Sprintf(`{name: %s, endpoint: "unix://%s"`, name, endpoint)
		if timeout != "" {
			entry += ", timeout: " + timeout
		}
		list = append(list, entry+"}")
	}
	h := startPodHostWith(t, fmt.Sprintf(`  - name: csi
    kind: volume
    path: volume-csi
    config: {drivers: [%s], stateDir: "%s"}
`, strings.Join(list, ", "), filepath.Join(t.TempDir(), "volume-csi")))
	t.Cleanup(func() { unmountBelow(t, h.root) })
	return h
}

// writeClaim defines a PersistentVolume <claim>-pv of the driver's volume
// handle and the claim <claim> bound to it.
func (h *podHost) writeClaim(claim, driver, handle string) {
	h.t.Helper()
	h.writePVClaim(claim, fmt.Sprintf("csi: {driver: %s, volumeHandle: %s, fsType: ext4}", driver, handle), false, "")
}

// writePVClaim defines a PersistentVolume <claim>-pv with the source
// (one flow-style YAML line: "iscsi: {...}", "fc: {...}", "csi: {...}"), volumeMode
// Block when block, extraSpec added to its spec (YAML lines indented by
// two), and the claim <claim> bound to it.
func (h *podHost) writePVClaim(claim, source string, block bool, extraSpec string) {
	h.t.Helper()
	mode := "Filesystem"
	if block {
		mode = "Block"
	}
	h.writeManifest(claim+"-claim.yaml", fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: %[1]s-pv}
spec:
  capacity: {storage: 64Mi}
  accessModes: [ReadWriteOnce]
  volumeMode: %[2]s
  %[3]s
%[4]s---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: %[1]s, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  volumeMode: %[2]s
  volumeName: %[1]s-pv
  resources: {requests: {storage: 64Mi}}
`, claim, mode, source, extraSpec))
}

// claimsPod runs script with each claim mounted at /<claim>.
func claimsPod(name, script string, claims ...string) *v1.Pod {
	zero := int64(0)
	pod := busyPod(name, v1.RestartPolicyAlways, sh("main", script))
	for _, c := range claims {
		pod.Spec.Volumes = append(pod.Spec.Volumes, volume(c, v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c}}))
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, v1.VolumeMount{Name: c, MountPath: "/" + c})
	}
	pod.Spec.TerminationGracePeriodSeconds = &zero
	return pod
}

// stagingPath is the host's staging directory of a CSI volume.
func (h *podHost) stagingPath(driver, handle string) string {
	sum := sha256.Sum256([]byte(handle))
	return filepath.Join(h.root, "plugins", "kubernetes.io~csi", driver, hex.EncodeToString(sum[:]), "globalmount")
}

// mountPoints are the mount points of /proc/self/mountinfo, one per line.
func mountPoints(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			out = append(out, f[4])
		}
	}
	return out
}

// mountsBelow is how many mount points lie below dir.
func mountsBelow(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	for _, p := range mountPoints(t) {
		if strings.HasPrefix(p, dir+"/") {
			n++
		}
	}
	return n
}

// namedPlugin is the info of the plugin called name.
func (h *podHost) namedPlugin(name string) (localapi.PluginInfo, bool) {
	ctx, cancel := context.WithTimeout(h.t.Context(), 5*time.Second)
	defer cancel()
	plugins, err := h.client.Plugins(ctx)
	if err != nil {
		return localapi.PluginInfo{}, false
	}
	for _, p := range plugins {
		if p.Name == name {
			return p, true
		}
	}
	return localapi.PluginInfo{}, false
}

// metricLines are the lines of GET /metrics that start with prefix.
func (h *podHost) metricLines(prefix string) []string {
	h.t.Helper()
	resp, err := h.scrape()
	if err != nil {
		h.t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// containerWaiting reports whether the pod is Pending with its container
// waiting in ContainerCreating.
func containerWaiting(p *v1.Pod) bool {
	c := containerStatus(p, "main")
	return p.Status.Phase == v1.PodPending && c != nil && c.State.Waiting != nil && c.State.Waiting.Reason == "ContainerCreating"
}
