package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// fsGroupProbe prints the process' groups, and for each emptyDir the
// group of a file the process creates there and the directory's mode and
// group, and the same of a subPath the host created.
const fsGroupProbe = `echo "groups=$(id -G)"; ` +
	`for d in /disk /mem; do touch $d/f && echo "$d file=$(stat -c %g $d/f) dir=$(stat -c %A:%g $d)"; done; ` +
	`echo "/sub dir=$(stat -c %A:%g /sub)"; touch /sub/f && echo "/sub file=$(stat -c %g /sub/f)"`

// TestPodFSGroup: a pod with fsGroup 1234 that runs as uid 1000 has 1234
// among its groups; its emptyDirs, on disk and in memory, belong to 1234
// with the setgid bit (and the tmpfs keeps its sticky bit), so the files
// the non-root process creates there belong to 1234; a subPath the host
// creates has the volume root's mode and group, as under the kubelet.
func TestPodFSGroup(t *testing.T) {
	h := startPodHost(t)
	pod := busyPod("fsgroup", v1.RestartPolicyNever, sh("app", fsGroupProbe))
	pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](1234)}
	pod.Spec.Volumes = []v1.Volume{
		volume("disk", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}),
		volume("mem", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}),
	}
	pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{
		{Name: "disk", MountPath: "/disk"},
		{Name: "mem", MountPath: "/mem"},
		{Name: "mem", MountPath: "/sub", SubPath: "nested/sub"},
	}
	h.apply(pod)
	h.waitPhase("fsgroup", v1.PodSucceeded, 90*time.Second)
	out := h.logsOf("fsgroup", "app")
	wantLines(t, "fsGroup", out,
		"/disk file=1234 dir=drwxrwsrwx:1234",
		"/mem file=1234 dir=drwxrwsrwt:1234",
		"/sub dir=drwxrwsrwt:1234", "/sub file=1234")
	if !containsWord(out, "groups=", "1234") {
		t.Errorf("id -G lacks the fsGroup 1234:\n%s", out)
	}
	zero := int64(0)
	h.delete("fsgroup", &zero) // unmounts the tmpfs
	h.waitGone("fsgroup", 60*time.Second)
}

// containsWord reports whether the line of out that starts with prefix
// has word among its space-separated words.
func containsWord(out, prefix, word string) bool {
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok && slices.Contains(strings.Fields(rest), word) {
			return true
		}
	}
	return false
}
