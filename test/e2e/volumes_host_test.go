package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// emptyDirPath is where the host keeps a pod's emptyDir.
func (h *podHost) emptyDirPath(uid, name string) string {
	return filepath.Join(h.root, "pods", uid, "volumes", "kubernetes.io~empty-dir", name)
}

// mountInfo returns the fields of the line of /proc/self/mountinfo whose
// mount point is path, or nil.
func mountInfo(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			return f
		}
	}
	return nil
}

// waitLog waits until the container's log holds want.
func (h *podHost) waitLog(pod, container, want string) {
	h.t.Helper()
	var out string
	poll(h.t, 60*time.Second, func() bool {
		out, _ = h.hostCLI(h.t.Context(), "logs", "default/"+pod, "-c", container)
		return strings.Contains(out, want)
	}, func() string {
		return "podhost logs default/" + pod + " -c " + container + ": " + out + "\n" + h.logTail()
	})
}

func volume(name string, src v1.VolumeSource) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: src}
}

// TestVolumesHostHandled runs pods with the volumes the host serves
// itself through a real host and containerd: an emptyDir shared by two
// containers, a hostPath whose file shows on the host, a Memory emptyDir
// that is a tmpfs, and a hostPath of the wrong type that keeps its pod
// Pending with FailedMount. After each delete the emptyDir is gone and no
// mount is left.
func TestVolumesHostHandled(t *testing.T) {
	h := startPodHost(t)
	zero := int64(0)

	t.Run("emptyDir shared by two containers", func(t *testing.T) {
		pod := busyPod("vol-shared", v1.RestartPolicyAlways,
			sh("writer", `echo hello-through-emptydir > /shared/msg; exec sleep 3600`),
			sh("reader", `while [ ! -f /data/msg ]; do sleep 0.2; done; cat /data/msg; exec sleep 3600`))
		pod.Spec.Volumes = []v1.Volume{volume("shared", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})}
		pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "shared", MountPath: "/shared"}}
		pod.Spec.Containers[1].VolumeMounts = []v1.VolumeMount{{Name: "shared", MountPath: "/data", ReadOnly: true}}
		pod.Spec.TerminationGracePeriodSeconds = &zero
		h.apply(pod)
		got := h.waitPod("vol-shared", 60*time.Second, "running", running)
		h.waitLog("vol-shared", "reader", "hello-through-emptydir")
		dir := h.emptyDirPath(string(got.UID), "shared")
		if b, err := os.ReadFile(filepath.Join(dir, "msg")); err != nil || string(b) != "hello-through-emptydir\n" {
			t.Errorf("the emptyDir's file on the host: %q, %v", b, err)
		}
		h.delete("vol-shared", &zero)
		h.waitGone("vol-shared", 60*time.Second)
		if _, err := os.Stat(filepath.Join(h.root, "pods", string(got.UID))); !os.IsNotExist(err) {
			t.Errorf("pod directory after delete: %v; want it gone", err)
		}
	})

	t.Run("hostPath visible on the host", func(t *testing.T) {
		hostDir := filepath.Join(t.TempDir(), "out")
		typ := v1.HostPathDirectoryOrCreate
		pod := busyPod("vol-hostpath", v1.RestartPolicyAlways, sh("main", `echo written-by-pod > /out/sub/file; exec sleep 3600`))
		pod.Spec.Volumes = []v1.Volume{volume("out", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir, Type: &typ}})}
		pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{
			{Name: "out", MountPath: "/out"},
			{Name: "out", MountPath: "/out/sub", SubPath: "from-sub"},
		}
		pod.Spec.TerminationGracePeriodSeconds = &zero
		h.apply(pod)
		h.waitPod("vol-hostpath", 60*time.Second, "running", running)
		var b []byte
		poll(t, 30*time.Second, func() bool {
			b, _ = os.ReadFile(filepath.Join(hostDir, "from-sub", "file"))
			return string(b) == "written-by-pod\n"
		}, func() string { return "host file: " + string(b) })
		h.delete("vol-hostpath", &zero)
		h.waitGone("vol-hostpath", 60*time.Second)
		if _, err := os.Stat(filepath.Join(hostDir, "from-sub", "file")); err != nil {
			t.Errorf("the hostPath's file after delete: %v; want it kept", err)
		}
	})

	t.Run("Memory emptyDir is a tmpfs", func(t *testing.T) {
		limit := resource.MustParse("16Mi")
		pod := busyPod("vol-memory", v1.RestartPolicyAlways, sh("main", `awk '$2=="/mem" {print "fstype=" $3}' /proc/mounts; exec sleep 3600`))
		pod.Spec.Volumes = []v1.Volume{volume("mem", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: &limit}})}
		pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "mem", MountPath: "/mem"}}
		pod.Spec.TerminationGracePeriodSeconds = &zero
		h.apply(pod)
		got := h.waitPod("vol-memory", 60*time.Second, "running", running)
		h.waitLog("vol-memory", "main", "fstype=tmpfs")
		dir := h.emptyDirPath(string(got.UID), "mem")
		info := mountInfo(t, dir)
		if info == nil || !strings.Contains(strings.Join(info, " "), "- tmpfs tmpfs") || !strings.Contains(info[len(info)-1], "size=16384k") {
			t.Errorf("mountinfo of %s: %q; want a tmpfs of size=16384k", dir, info)
		}
		h.delete("vol-memory", &zero)
		h.waitGone("vol-memory", 60*time.Second)
		if info := mountInfo(t, dir); info != nil {
			t.Errorf("mount left after delete: %q", info)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("emptyDir after delete: %v; want it gone", err)
		}
	})

	t.Run("hostPath of the wrong type", func(t *testing.T) {
		typ := v1.HostPathFile
		dir := t.TempDir()
		pod := busyPod("vol-badtype", v1.RestartPolicyAlways, sh("main", `exec sleep 3600`))
		pod.Spec.Volumes = []v1.Volume{volume("conf", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir, Type: &typ}})}
		pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "conf", MountPath: "/conf"}}
		pod.Spec.TerminationGracePeriodSeconds = &zero
		h.apply(pod)
		poll(t, 30*time.Second, func() bool {
			return hasEvent(h.events("vol-badtype"), "FailedMount", "hostPath.type: File: "+dir+" is not a file")
		}, func() string { return "events:\n" + eventsString(h.events("vol-badtype")) + h.logTail() })
		if p, ok := h.get("vol-badtype"); !ok || p.Status.Phase != v1.PodPending || len(h.criContainers(string(p.UID))) != 0 {
			t.Errorf("pod %s; want Pending with no container", podStatusString(p))
		}
		h.delete("vol-badtype", &zero)
		h.waitGone("vol-badtype", 60*time.Second)
	})
}
