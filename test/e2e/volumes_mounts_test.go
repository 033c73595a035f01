package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/images/localimages"
)

// fieldEnv is an env variable from the downward API.
func fieldEnv(name, path string) v1.EnvVar {
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: path}}}
}

// configError waits until the pod's container waits with
// CreateContainerConfigError whose message has want, and checks that no
// container of the pod was created.
func (h *podHost) configError(name, container, want string) {
	h.t.Helper()
	p := h.waitPod(name, 60*time.Second, "waiting with CreateContainerConfigError", func(p *v1.Pod) bool {
		cs := containerStatus(p, container)
		return cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CreateContainerConfigError"
	})
	wantLines(h.t, name, containerStatus(p, container).State.Waiting.Message, want)
	if n := len(h.criContainers(string(p.UID))); n != 0 {
		h.t.Errorf("containerd has %d containers of pod %s; want none created", n, name)
	}
}

// TestVolumeMountSubPathExpr: a mount whose subPathExpr is the pod's name
// from the downward API puts what the container writes in the volume's
// directory named after the pod, created by the host; a subPathExpr that
// expands to ".." or names a variable without a value keeps the
// container from being created (CreateContainerConfigError naming the
// field), as under the kubelet.
func TestVolumeMountSubPathExpr(t *testing.T) {
	h := startPodHost(t)
	zero := int64(0)
	pod := func(name string, env []v1.EnvVar, expr string) *v1.Pod {
		p := busyPod(name, v1.RestartPolicyAlways, sh("main", `echo written-through-subpathexpr > /logs/file; exec sleep 3600`))
		p.Spec.Volumes = []v1.Volume{volume("logs", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})}
		p.Spec.Containers[0].Env = env
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "logs", MountPath: "/logs", SubPathExpr: expr}}
		p.Spec.TerminationGracePeriodSeconds = &zero
		return p
	}

	t.Run("pod name", func(t *testing.T) {
		h.apply(pod("subpath-web", []v1.EnvVar{fieldEnv("POD_NAME", "metadata.name")}, "pods/$(POD_NAME)"))
		got := h.waitPod("subpath-web", 60*time.Second, "running", running)
		file := filepath.Join(h.emptyDirPath(string(got.UID), "logs"), "pods", "subpath-web", "file")
		var b []byte
		poll(t, 30*time.Second, func() bool {
			b, _ = os.ReadFile(file)
			return string(b) == "written-through-subpathexpr\n"
		}, func() string { return file + ": " + string(b) + "\n" + h.logTail() })
		h.delete("subpath-web", &zero)
		h.waitGone("subpath-web", 60*time.Second)
	})

	t.Run("expands to ..", func(t *testing.T) {
		h.apply(pod("subpath-dots", []v1.EnvVar{{Name: "UP", Value: ".."}}, "$(UP)"))
		h.configError("subpath-dots", "main", `volumeMounts[0].subPathExpr: ".." must be a relative path without ".."`)
		h.delete("subpath-dots", &zero)
		h.waitGone("subpath-dots", 60*time.Second)
	})

	// As the upstream spec "a failing subpath expansion can be modified
	// during the lifecycle of a container": the container is created once
	// the annotation is there.
	t.Run("missing annotation, then added", func(t *testing.T) {
		p := pod("subpath-missing", []v1.EnvVar{fieldEnv("DIR", "metadata.annotations['dir']")}, "$(DIR)/x")
		h.apply(p)
		h.configError("subpath-missing", "main", "volumeMounts[0].subPathExpr: \"$(DIR)/x\": missing value for DIR")
		p.Annotations = map[string]string{"dir": "mypath"}
		h.apply(p)
		got := h.waitPod("subpath-missing", 60*time.Second, "running", running)
		file := filepath.Join(h.emptyDirPath(string(got.UID), "logs"), "mypath", "x", "file")
		var b []byte
		poll(t, 30*time.Second, func() bool {
			b, _ = os.ReadFile(file)
			return string(b) == "written-through-subpathexpr\n"
		}, func() string { return file + ": " + string(b) + "\n" + h.logTail() })
		h.delete("subpath-missing", &zero)
		h.waitGone("subpath-missing", 60*time.Second)
	})
}

// TestVolumeMountPropagation: in one pod sharing an emptyDir, a tmpfs the
// host mounts in the volume after the containers started shows in the
// HostToContainer container and not in the private (None) one, and a
// tmpfs a privileged Bidirectional container mounts there shows on the
// host. The host made its root dir a shared mount at start.
func TestVolumeMountPropagation(t *testing.T) {
	h := startPodHost(t)
	zero := int64(0)
	if info := mountInfo(t, h.root); info == nil || !strings.Contains(strings.Join(info, " "), "shared:") {
		t.Fatalf("the host's root dir %s in mountinfo: %q; want a shared mount", h.root, info)
	}
	watch := `while [ ! -f /vol/flag ]; do sleep 0.2; done; echo "sees: $(cat /vol/in/marker 2>&1)"; exec sleep 3600`
	pod := busyPod("propagation", v1.RestartPolicyAlways,
		sh("slave", watch), sh("private", watch),
		sh("both", `mkdir -p /vol/out && mount -t tmpfs tmpfs /vol/out && echo from-container > /vol/out/marker; exec sleep 3600`))
	pod.Spec.Volumes = []v1.Volume{volume("vol", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})}
	mount := func(mode v1.MountPropagationMode) []v1.VolumeMount {
		return []v1.VolumeMount{{Name: "vol", MountPath: "/vol", MountPropagation: &mode}}
	}
	pod.Spec.Containers[0].VolumeMounts = mount(v1.MountPropagationHostToContainer)
	pod.Spec.Containers[1].VolumeMounts = mount(v1.MountPropagationNone)
	pod.Spec.Containers[2].VolumeMounts = mount(v1.MountPropagationBidirectional)
	pod.Spec.Containers[2].SecurityContext = &v1.SecurityContext{Privileged: &[]bool{true}[0]}
	pod.Spec.TerminationGracePeriodSeconds = &zero
	h.apply(pod)
	got := h.waitPod("propagation", 60*time.Second, "running", running)
	dir := h.emptyDirPath(string(got.UID), "vol")
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	t.Cleanup(func() {
		_ = syscall.Unmount(in, syscall.MNT_DETACH)
		_ = syscall.Unmount(out, syscall.MNT_DETACH)
	})

	// Host to container: a mount made now, after the containers started.
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", in, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "marker"), []byte("from-host"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flag"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h.waitLog("propagation", "slave", "sees: from-host")
	h.waitLog("propagation", "private", "sees: cat: can't open '/vol/in/marker': No such file or directory")

	// Container to host: the privileged container's mount.
	var b []byte
	poll(t, 30*time.Second, func() bool {
		b, _ = os.ReadFile(filepath.Join(out, "marker"))
		return string(b) == "from-container\n"
	}, func() string { return "host's " + out + "/marker: " + string(b) + "\n" + h.logTail() })
	if info := mountInfo(t, out); info == nil || !strings.Contains(strings.Join(info, " "), "- tmpfs") {
		t.Errorf("mountinfo of %s on the host: %q; want the container's tmpfs", out, info)
	}

	for _, p := range []string{in, out} {
		if err := syscall.Unmount(p, 0); err != nil {
			t.Errorf("unmounting %s: %v", p, err)
		}
	}
	h.delete("propagation", &zero)
	h.waitGone("propagation", 60*time.Second)
}

// subPathMounts are the mount points under the host's volume-subpaths
// directories in /proc/self/mountinfo (the host shares the test's mount
// namespace).
func (h *podHost) subPathMounts() []string {
	h.t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], filepath.Join(h.root, "pods")+"/") && strings.Contains(f[4], "/volume-subpaths/") {
			out = append(out, f[4])
		}
	}
	return out
}

// TestVolumeMountSubPathShared: a container mounting a subPath of an
// emptyDir that another container of the pod writes sees what it writes,
// through the bind mount the host made under the pod's volume-subpaths
// directory; a subPath through a symbolic link to / that an init
// container planted in the volume keeps the container from being created
// (CreateContainerConfigError with the kubelet's message); and after the
// pods are deleted no volume-subpaths mount is left.
func TestVolumeMountSubPathShared(t *testing.T) {
	h := startPodHost(t)
	zero := int64(0)
	shared := []v1.Volume{volume("shared", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})}

	t.Run("shared", func(t *testing.T) {
		p := busyPod("subpath-shared", v1.RestartPolicyAlways,
			sh("writer", `mkdir -p /shared/dir && echo from-writer > /shared/dir/file.tmp && mv /shared/dir/file.tmp /shared/dir/file; exec sleep 3600`),
			sh("reader", `while [ ! -f /sub/file ]; do sleep 0.2; done; echo "reader sees: $(cat /sub/file)"; exec sleep 3600`))
		p.Spec.Volumes = shared
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "shared", MountPath: "/shared"}}
		p.Spec.Containers[1].VolumeMounts = []v1.VolumeMount{{Name: "shared", MountPath: "/sub", SubPath: "dir"}}
		p.Spec.TerminationGracePeriodSeconds = &zero
		h.apply(p)
		got := h.waitPod("subpath-shared", 90*time.Second, "running", running)
		h.waitLog("subpath-shared", "reader", "reader sees: from-writer")
		target := filepath.Join(h.root, "pods", string(got.UID), "volume-subpaths", "shared", "reader", "0")
		if m := h.subPathMounts(); !slices.Contains(m, target) {
			t.Errorf("volume-subpaths mounts %q; want %s", m, target)
		}
		h.delete("subpath-shared", &zero)
		h.waitGone("subpath-shared", 60*time.Second)
	})

	t.Run("escape through a planted link", func(t *testing.T) {
		p := busyPod("subpath-escape", v1.RestartPolicyAlways, sh("main", `ls /escaped; exec sleep 3600`))
		p.Spec.InitContainers = []v1.Container{sh("plant", `ln -s / /shared/escape`)}
		p.Spec.InitContainers[0].Image, p.Spec.InitContainers[0].ImagePullPolicy = p.Spec.Containers[0].Image, v1.PullNever
		p.Spec.Volumes = shared
		p.Spec.InitContainers[0].VolumeMounts = []v1.VolumeMount{{Name: "shared", MountPath: "/shared"}}
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "shared", MountPath: "/escaped", SubPath: "escape/etc"}}
		p.Spec.TerminationGracePeriodSeconds = &zero
		h.apply(p)
		got := h.waitPod("subpath-escape", 60*time.Second, "waiting with CreateContainerConfigError", func(p *v1.Pod) bool {
			cs := containerStatus(p, "main")
			return cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CreateContainerConfigError"
		})
		wantLines(t, "subpath-escape", containerStatus(got, "main").State.Waiting.Message,
			`failed to prepare subPath for volumeMount "shared" of container "main": "escape/etc" leaves the volume`)
		for _, c := range h.criContainers(string(got.UID)) {
			if c.GetMetadata().GetName() == "main" {
				t.Errorf("containerd has container main of pod subpath-escape; want it never created")
			}
		}
		h.delete("subpath-escape", &zero)
		h.waitGone("subpath-escape", 60*time.Second)
	})

	var left []string
	poll(t, 60*time.Second, func() bool {
		left = h.subPathMounts()
		return len(left) == 0
	}, func() string {
		return fmt.Sprintf("volume-subpaths mounts left after the pods were deleted: %q\n%s", left, h.logTail())
	})
	if dirs, _ := filepath.Glob(filepath.Join(h.root, "pods", "*", "volume-subpaths")); len(dirs) > 0 {
		t.Errorf("volume-subpaths directories left: %q", dirs)
	}
}

// TestVolumeMountSubPathHostRestart: the host is killed while a static
// pod with a subPath mount runs, the pod's manifest is removed while it
// is down, and the host started again finds the subPath mount the killed
// one made (on disk and in the mount table, nothing in memory) and
// unmounts and removes it with the pod's volume: none is leaked.
func TestVolumeMountSubPathHostRestart(t *testing.T) {
	h := startPodHost(t)
	name := staticName(t, "subpath-restart")
	path := h.writeManifest("subpath-restart.yaml", `apiVersion: v1
kind: Pod
metadata: {name: subpath-restart}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 0
  volumes:
  - {name: shared, emptyDir: {}}
  containers:
  - name: app
    image: `+localimages.BusyboxName+`
    imagePullPolicy: Never
    command: [sh, -c, "echo in-the-subpath > /sub/file; exec sleep 3600"]
    volumeMounts:
    - {name: shared, mountPath: /sub, subPath: dir}
`)
	p := h.waitPod(name, 60*time.Second, "running", running)
	target := filepath.Join(h.root, "pods", string(p.UID), "volume-subpaths", "shared", "app", "0")
	if m := h.subPathMounts(); !slices.Contains(m, target) {
		t.Fatalf("volume-subpaths mounts %q; want %s", m, target)
	}

	h.kill()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	h.start()

	var left []string
	poll(t, 90*time.Second, func() bool {
		left = h.subPathMounts()
		_, err := os.Lstat(filepath.Join(h.root, "pods", string(p.UID)))
		return len(left) == 0 && os.IsNotExist(err)
	}, func() string {
		return fmt.Sprintf("after the restart, volume-subpaths mounts %q, or the pod's directory, left\n%s", left, h.logTail())
	})
}
