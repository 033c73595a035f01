package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// mountCount is how many lines of /proc/self/mountinfo have path as
// mount point.
func mountCount(t *testing.T, path string) int {
	t.Helper()
	n := 0
	for _, p := range mountPoints(t) {
		if p == path {
			n++
		}
	}
	return n
}

func emptyDirPod(name string) *v1.Pod {
	zero := int64(0)
	pod := busyPod(name, v1.RestartPolicyAlways, sh("main", `echo kept > /disk/f; echo kept > /mem/f; exec sleep 3600`))
	pod.Spec.Volumes = []v1.Volume{
		volume("disk", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}),
		volume("mem", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}),
	}
	pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "disk", MountPath: "/disk"}, {Name: "mem", MountPath: "/mem"}}
	pod.Spec.TerminationGracePeriodSeconds = &zero
	return pod
}

// TestVolumesSurviveHostRestart kills the host (SIGKILL) under a running
// pod with a disk and a Memory emptyDir: after the restart the container
// is the same, its files are still there and the tmpfs is mounted once;
// deleting the pod then removes both. A static pod whose manifest went
// while the host was down has its emptyDirs torn down after the restart.
func TestVolumesSurviveHostRestart(t *testing.T) {
	h := startPodHost(t)
	h.apply(emptyDirPod("vol-restart"))
	before := h.waitPod("vol-restart", 60*time.Second, "running", running)
	static := emptyDirPod("vol-static")
	doc, err := json.Marshal(static)
	if err != nil {
		t.Fatal(err)
	}
	manifest := h.writeManifest("vol-static.json", string(doc))
	staticPod := h.waitPod(staticName(t, "vol-static"), 60*time.Second, "running", running)
	dirs := func(p *v1.Pod) (string, string) {
		return h.emptyDirPath(string(p.UID), "disk"), h.emptyDirPath(string(p.UID), "mem")
	}
	disk, mem := dirs(before)
	sDisk, sMem := dirs(staticPod)
	poll(t, 30*time.Second, func() bool {
		_, e1 := os.Stat(filepath.Join(mem, "f"))
		_, e2 := os.Stat(filepath.Join(sMem, "f"))
		return e1 == nil && e2 == nil
	}, func() string { return "the pods' files in their Memory emptyDirs" })

	h.kill()
	if err := os.Remove(manifest); err != nil {
		t.Fatal(err)
	}
	h.start()

	poll(t, 60*time.Second, func() bool {
		_, err := os.Stat(sDisk)
		return os.IsNotExist(err) && mountCount(t, sMem) == 0
	}, func() string { return "the removed static pod's emptyDirs are still there\n" + h.logTail() })
	after := h.waitPod("vol-restart", 60*time.Second, "running", running)
	if a, b := containerStatus(after, "main"), containerStatus(before, "main"); a == nil || b == nil || a.ContainerID != b.ContainerID || a.RestartCount != 0 {
		t.Errorf("container after the restart %+v; want the same one as before (%+v)", a, b)
	}
	for _, f := range []string{filepath.Join(disk, "f"), filepath.Join(mem, "f")} {
		if b, err := os.ReadFile(f); err != nil || string(b) != "kept\n" {
			t.Errorf("%s after the restart: %q, %v", f, b, err)
		}
	}
	if n := mountCount(t, mem); n != 1 {
		t.Errorf("the Memory emptyDir is mounted %d times; want once", n)
	}
	zero := int64(0)
	h.delete("vol-restart", &zero)
	h.waitGone("vol-restart", 60*time.Second)
	if _, err := os.Stat(disk); !os.IsNotExist(err) || mountCount(t, mem) != 0 {
		t.Errorf("after delete: disk emptyDir %v, mem mounts %d; want both gone", err, mountCount(t, mem))
	}
}
