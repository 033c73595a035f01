package e2e

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestVolumesCSIStats runs a pod with a claim of the loop driver (which
// has GET_VOLUME_STATS), a claim of a second loop driver without it, an
// emptyDir and a hostPath, behind the real volume-csi plugin: /metrics
// shows kubelet_volume_stats_* for the first claim only, with the loop
// image's size as capacity; the second driver is never asked for stats
// and nothing is counted as a failure; the series go with the pod.
func TestVolumesCSIStats(t *testing.T) {
	const noStatsDriver = "nostats.csi.podhost.dev"
	d := startLoopDriver(t)
	quiet := startLoopDriverWith(t, "driverName: "+noStatsDriver+"\ncapabilities: {volumeStats: false}\n")
	h := csiHost(t, "", loopDriver+"="+d.endpoint, noStatsDriver+"="+quiet.endpoint)
	h.writeClaim("data", loopDriver, d.createVolume(t, "stats-data"))
	h.writeClaim("quiet", noStatsDriver, quiet.createVolume(t, "stats-quiet"))
	pod := claimsPod("stats", "echo some-bytes > /data/f; exec sleep 3600", "data", "quiet")
	hostDir := t.TempDir()
	typ := v1.HostPathDirectoryOrCreate
	pod.Spec.Volumes = append(pod.Spec.Volumes,
		volume("scratch", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}),
		volume("logs", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir, Type: &typ}}))
	pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts,
		v1.VolumeMount{Name: "scratch", MountPath: "/scratch"}, v1.VolumeMount{Name: "logs", MountPath: "/logs"})
	h.apply(pod)
	h.waitPod("stats", 90*time.Second, "running", running)

	series := func() map[string]float64 {
		out := map[string]float64{}
		for _, l := range h.metricLines("kubelet_volume_stats_") {
			name, val, _ := strings.Cut(l, " ")
			v, err := strconv.ParseFloat(val, 64)
			if err != nil {
				t.Fatalf("metric line %q: %v", l, err)
			}
			out[name] = v
		}
		return out
	}
	const labels = `{namespace="default",persistentvolumeclaim="data"}`
	var got map[string]float64
	poll(t, 30*time.Second, func() bool { got = series(); return len(got) > 0 },
		func() string { return "no kubelet_volume_stats_* on /metrics\n" + h.logTail() })
	want := []string{"capacity_bytes", "available_bytes", "used_bytes", "inodes", "inodes_free", "inodes_used"}
	if len(got) != len(want) {
		t.Errorf("series %v; want the six of claim data only (none for quiet, scratch, logs)", got)
	}
	for _, w := range want {
		if _, ok := got["kubelet_volume_stats_"+w+labels]; !ok {
			t.Errorf("no kubelet_volume_stats_%s%s in %v", w, labels, got)
		}
	}
	// A 64 MiB image formatted ext4: the filesystem's size is the image's
	// less its metadata.
	capacity := got["kubelet_volume_stats_capacity_bytes"+labels]
	if capacity <= 48<<20 || capacity > 64<<20 {
		t.Errorf("capacity %v; want the 64 MiB image's filesystem size (48–64 MiB)", capacity)
	}
	if used, avail := got["kubelet_volume_stats_used_bytes"+labels], got["kubelet_volume_stats_available_bytes"+labels]; used <= 0 || avail <= 0 || used+avail > capacity {
		t.Errorf("used %v, available %v of capacity %v", used, avail, capacity)
	}
	if got["kubelet_volume_stats_inodes"+labels] <= 0 {
		t.Errorf("inodes %v; want ext4's count", got["kubelet_volume_stats_inodes"+labels])
	}
	for _, l := range h.metricLines("podhost_volume_stats_failures_total") {
		if !strings.HasSuffix(l, " 0") {
			t.Errorf("failure counted: %s\n%s", l, h.logTail())
		}
	}
	countStats := func(drv *loopDriverProc) (n int) {
		for _, c := range drv.logCalls(t) {
			if strings.HasPrefix(c, "NodeGetVolumeStats") {
				n++
			}
		}
		return n
	}
	if n := countStats(d); n == 0 {
		t.Errorf("the loop driver got no NodeGetVolumeStats")
	}
	if n := countStats(quiet); n != 0 {
		t.Errorf("the driver without GET_VOLUME_STATS got %d NodeGetVolumeStats", n)
	}

	zero := int64(0)
	h.delete("stats", &zero)
	h.waitGone("stats", 60*time.Second)
	if got := series(); len(got) != 0 {
		t.Errorf("series after the pod is gone: %v", got)
	}
}

// logCalls are every RPC of the driver's call log with its code.
func (d *loopDriverProc) logCalls(t *testing.T) []string {
	t.Helper()
	b, _ := os.ReadFile(d.callLog)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		var c struct{ RPC, Code string }
		if json.Unmarshal([]byte(l), &c) == nil {
			out = append(out, c.RPC+" "+c.Code)
		}
	}
	return out
}
