package e2e

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestVolumesSCSIUndeclaredMetrics runs volume-fc with metrics off (it
// declares no supports_metrics and refuses GetMetrics with
// FAILED_PRECONDITION, which the host would count as a failed call) and
// volume-iscsi with them on: a pod with an FC block claim and an iSCSI
// claim gets the iSCSI claim's stats on /metrics, none for the FC claim,
// and no stats call failed, so the FC plugin was never asked.
func TestVolumesSCSIUndeclaredMetrics(t *testing.T) {
	f := newSCSIFake(t)
	const portal, iqn, wwn = "127.0.0.1:3260", "iqn.2024-01.dev.podhost:metrics", "50060e801049cfd1"
	f.run("iscsi-target", portal, iqn, "0", loopDevice(t, 64<<20))
	f.run("fc-disk", wwn, "0", "sdf", loopDevice(t, 32<<20))
	h := scsiHost(t, f, ", metrics: false")
	h.writePVClaim("counted", fmt.Sprintf(`iscsi: {targetPortal: "%s", iqn: "%s", lun: 0, fsType: ext4}`, portal, iqn), false, "")
	h.writePVClaim("uncounted", fmt.Sprintf(`fc: {targetWWNs: ["%s"], lun: 0}`, wwn), true, "")
	pod := claimsPod("metrics", `stat -c 'type=%F' /dev/xvda; exec sleep 3600`, "counted")
	pod.Spec.Volumes = append(pod.Spec.Volumes, volume("uncounted", v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "uncounted"}}))
	pod.Spec.Containers[0].VolumeDevices = []v1.VolumeDevice{{Name: "uncounted", DevicePath: "/dev/xvda"}}
	h.apply(pod)
	h.waitPod("metrics", 90*time.Second, "running", running)
	h.waitLog("metrics", "main", "type=block special file")

	claim := func(name string) map[string]string {
		return map[string]string{"namespace": "default", "persistentvolumeclaim": name}
	}
	poll(t, 60*time.Second, func() bool {
		v, err := h.labeledMetric("kubelet_volume_stats_capacity_bytes", claim("counted"))
		return err == nil && v > 0
	}, func() string {
		return fmt.Sprintf("no capacity of claim counted: %q\n%s", h.metricLines("kubelet_volume_stats_"), h.logTail())
	})
	// The gatherer asks about each volume at once when it is mounted, so
	// both were considered by now; one more pass for a late call to show.
	time.Sleep(2 * time.Second)
	if v, err := h.labeledMetric("kubelet_volume_stats_capacity_bytes", claim("uncounted")); err == nil {
		t.Errorf("capacity of claim uncounted %v on /metrics; want none (volume-fc declares no metrics)", v)
	}
	for _, reason := range []string{"call", "capabilities", "answer"} {
		if v, err := h.labeledMetric("podhost_volume_stats_failures_total", map[string]string{"reason": reason}); err != nil || v != 0 {
			t.Errorf("podhost_volume_stats_failures_total{reason=%q} %v, %v; want 0 (no plugin asked against its declaration)", reason, v, err)
		}
	}
}
