package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/podhost/podhost/host/localapi"
)

// corruptVolumeRecords overwrites every volume record in the stopped
// host's state database with garbage: the next host leaves them out and
// rebuilds their volumes from the pod volume directories, asking the
// plugins.
func (h *podHost) corruptVolumeRecords() {
	h.t.Helper()
	db, err := bolt.Open(filepath.Join(h.root, "state.db"), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		h.t.Fatal(err)
	}
	defer db.Close()
	n := 0
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("volumes"))
		if b == nil {
			return fmt.Errorf("no volumes bucket in the state database")
		}
		var keys [][]byte
		if err := b.ForEach(func(k, _ []byte) error { keys = append(keys, slices.Clone(k)); return nil }); err != nil {
			return err
		}
		for _, k := range keys {
			if err := b.Put(k, []byte("{not a volume record")); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil || n == 0 {
		h.t.Fatalf("corrupting the volume records: %d corrupted, %v", n, err)
	}
}

// TestVolumesSCSIRestart kills the host (SIGKILL) under a pod with a
// mounted iSCSI claim, three times. A plain restart keeps the mounts:
// nothing is staged, published or logged out again and the container is
// the same. With the host's volume records lost, volume-iscsi's
// Reconstruct rebuilds the volume from the mount table, with the same
// outcome. With its own record corrupted as well, the plugin's
// Reconstruct fails: the volume stays in use (FailedReconstructVolume,
// podhost_volume_unresolved 1, retried with back-off), still mounted,
// never logged out, and the pod runs on. Once the record is whole again
// the volume resolves, and deleting the pod unmounts it, then logs out
// (the fake iscsiadm notes a logout under a mount).
func TestVolumesSCSIRestart(t *testing.T) {
	f := newSCSIFake(t)
	const portal, iqn = "127.0.0.1:3260", "iqn.2024-01.dev.podhost:restart"
	f.run("iscsi-target", portal, iqn, "0", loopDevice(t, 64<<20))
	h := scsiHost(t, f, "")
	h.writePVClaim("kept", fmt.Sprintf(`iscsi: {targetPortal: "%s", iqn: "%s", lun: 0, fsType: ext4}`, portal, iqn), false, "")
	h.apply(claimsPod("iscsi-kept", `echo kept > /kept/file && sync && echo done; exec sleep 3600`, "kept"))
	before := h.waitPod("iscsi-kept", 90*time.Second, "running", running)
	h.waitLog("iscsi-kept", "main", "done")
	staging := filepath.Join(h.root, "plugins", "kubernetes.io~iscsi", "iface-default", portal+"-"+iqn+"-lun-0")
	target := filepath.Join(h.root, "pods", string(before.UID), "volumes", "kubernetes.io~iscsi", "kept", "mount")
	capacity := `kubelet_volume_stats_capacity_bytes{namespace="default",persistentvolumeclaim="kept"}`
	unresolved := func() float64 { v, _ := h.metric("podhost_volume_unresolved"); return v }
	failures := func() float64 {
		v, _ := h.labeledMetric("podhost_volume_reconstruction_failures_total", map[string]string{"plugin": "kubernetes.io/iscsi"})
		return v
	}

	// kept checks, after a restart, that the pod runs on in the same
	// container over the same mounts and that iscsiadm was not called
	// since call seen.
	kept := func(t *testing.T, seen int) {
		t.Helper()
		after := h.waitPod("iscsi-kept", 60*time.Second, "running", running)
		if a, b := containerStatus(after, "main"), containerStatus(before, "main"); a == nil || b == nil || a.ContainerID != b.ContainerID || a.RestartCount != 0 {
			t.Errorf("container after the restart %+v; want the one from before (%+v)", a, b)
		}
		if s, p := mountCount(t, staging), mountCount(t, target); s != 1 || p != 1 {
			t.Errorf("%d mounts of the staging path, %d of the pod's; want one each", s, p)
		}
		if calls := f.calls("iscsiadm")[seen:]; len(calls) > 0 {
			t.Errorf("iscsiadm calls over the restart %q; want none (no login, no logout)", calls)
		}
	}
	// settled waits until the restarted host reports the claim's capacity
	// (it knows the volume mounted), then gives a wrong teardown or
	// re-stage a few reconciler passes to show.
	settled := func(t *testing.T) {
		t.Helper()
		poll(t, 60*time.Second, func() bool { return len(h.metricLines(capacity)) == 1 },
			func() string { return fmt.Sprintf("no %s on /metrics\n%s", capacity, h.logTail()) })
		time.Sleep(2 * time.Second)
	}

	t.Run("a plain restart keeps the mounts", func(t *testing.T) {
		seen := len(f.calls("iscsiadm"))
		h.kill()
		h.start()
		settled(t)
		kept(t, seen)
		if u := unresolved(); u != 0 {
			t.Errorf("podhost_volume_unresolved %v; want 0", u)
		}
	})

	t.Run("lost host records: the plugin rebuilds the volume", func(t *testing.T) {
		seen := len(f.calls("iscsiadm"))
		h.kill()
		h.corruptVolumeRecords()
		h.start()
		settled(t)
		kept(t, seen)
		if u, n := unresolved(), failures(); u != 0 || n != 0 {
			t.Errorf("podhost_volume_unresolved %v, reconstruction failures %v; want 0, 0\n%s", u, n, h.logTail())
		}
		if !strings.Contains(h.logTail(), "volume state records left out") {
			t.Errorf("the host did not say it left the corrupt records out\n%s", h.logTail())
		}
	})

	// restartFailing kills the host, corrupts its volume records and
	// volume-iscsi's record (after removing the manifests given), starts
	// it again and waits for three failed reconstructions: the first at
	// the start, two retries after the desired state was populated, when
	// a wrong teardown would run. It returns the mend of the record.
	restartFailing := func(t *testing.T, manifests ...string) (mend func()) {
		t.Helper()
		records, _ := filepath.Glob(filepath.Join(f.state, "iscsi", "*.json"))
		if len(records) != 1 {
			t.Fatalf("volume-iscsi records %q; want one", records)
		}
		record, err := os.ReadFile(records[0])
		if err != nil {
			t.Fatal(err)
		}
		h.kill()
		for _, m := range manifests {
			if err := os.Remove(m); err != nil {
				t.Fatal(err)
			}
		}
		h.corruptVolumeRecords()
		if err := os.WriteFile(records[0], []byte("{torn"), 0o600); err != nil {
			t.Fatal(err)
		}
		h.start()
		poll(t, 60*time.Second, func() bool { return failures() >= 3 && unresolved() == 1 },
			func() string {
				return fmt.Sprintf("reconstruction failures %v, unresolved %v; want >= 3 and 1\n%s", failures(), unresolved(), h.logTail())
			})
		return func() {
			t.Helper()
			if err := os.WriteFile(records[0], record, 0o600); err != nil {
				t.Fatal(err)
			}
			poll(t, 3*time.Minute, func() bool { return unresolved() == 0 },
				func() string {
					return fmt.Sprintf("podhost_volume_unresolved %v after the record was mended\n%s", unresolved(), h.logTail())
				})
		}
	}
	// loggedOut waits until iscsiadm, since call seen, logged out and
	// deleted the node record, and nothing else, after the unmounts.
	loggedOut := func(t *testing.T, seen int, mounts ...string) {
		t.Helper()
		want := []string{
			"-m node -p " + portal + " -T " + iqn + " --logout -I default",
			"-m node -p " + portal + " -T " + iqn + " -o delete -I default",
		}
		poll(t, 60*time.Second, func() bool { return slices.Equal(f.calls("iscsiadm")[seen:], want) },
			func() string {
				return fmt.Sprintf("iscsiadm calls %q; want %q\n%s", f.calls("iscsiadm")[seen:], want, h.logTail())
			})
		if m := f.calls("misuse"); len(m) > 0 {
			t.Errorf("the fake tools were used under a mount: %q", m)
		}
		for _, m := range mounts {
			if n := mountCount(t, m); n != 0 {
				t.Errorf("%s mounted %d times after the logout; want 0", m, n)
			}
		}
	}

	t.Run("a failed reconstruction keeps the volume in use", func(t *testing.T) {
		seen := len(f.calls("iscsiadm"))
		mend := restartFailing(t)
		if evs := h.events("iscsi-kept"); !hasEvent(evs, "FailedReconstructVolume", "stays in use") {
			t.Errorf("no FailedReconstructVolume event for the pod:\n%s", eventsString(evs))
		}
		kept(t, seen)
		mend()
		kept(t, seen)
		zero := int64(0)
		h.delete("iscsi-kept", &zero)
		h.waitGone("iscsi-kept", 60*time.Second)
		loggedOut(t, seen, staging, target)
	})

	// The kubelet's corruption (#101791): the pod went while the host was
	// down, so nothing but the failed reconstruction stands for its
	// volume; the volume must still not be taken for unused.
	t.Run("a failed reconstruction of a gone pod's volume keeps it in use", func(t *testing.T) {
		pod := claimsPod("iscsi-static", `echo static > /kept/file && sync && echo done; exec sleep 3600`, "kept")
		doc, err := json.Marshal(pod)
		if err != nil {
			t.Fatal(err)
		}
		manifest := h.writeManifest("iscsi-static.json", string(doc))
		name := staticName(t, "iscsi-static")
		p := h.waitPod(name, 90*time.Second, "running", running)
		h.waitLog(name, "main", "done")
		podTarget := filepath.Join(h.root, "pods", string(p.UID), "volumes", "kubernetes.io~iscsi", "kept", "mount")
		seen := len(f.calls("iscsiadm"))
		mend := restartFailing(t, manifest)
		evs, err := h.client.Events(t.Context(), localapi.EventFilter{Kind: "Pod"})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range evs {
			found = found || e.Object.UID == string(p.UID) && e.Reason == "FailedReconstructVolume"
		}
		if !found {
			t.Errorf("no FailedReconstructVolume event for pod %s:\n%s", p.UID, eventsString(evs))
		}
		if s, n := mountCount(t, staging), mountCount(t, podTarget); s != 1 || n != 1 {
			t.Errorf("%d mounts of the staging path, %d of the gone pod's; want one each (the volume is in use)", s, n)
		}
		if calls := f.calls("iscsiadm")[seen:]; len(calls) > 0 {
			t.Errorf("iscsiadm calls while the reconstruction fails %q; want none", calls)
		}
		mend()
		loggedOut(t, seen, staging, podTarget)
	})
}
