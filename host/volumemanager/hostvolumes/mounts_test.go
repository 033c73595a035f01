package hostvolumes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/host/volumemanager"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

var readOnly = true

func mountsPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"},
		Spec: v1.PodSpec{Volumes: []v1.Volume{
			{Name: "cache", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
			{Name: "etc", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/etc"}}},
			{Name: "data", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "drv"}}},
			{Name: "ro", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "drv", ReadOnly: &readOnly}}},
			{Name: "undesired", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		}},
	}
}

// diskVolume is a claim of a raw block volume ("disk" in blockDesired).
var diskVolume = v1.Volume{Name: "disk", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "disk"}}}

// TestContainerDevices maps volumeDevices to the map files of block
// volumes and rejects the devices it cannot serve, naming the field.
func TestContainerDevices(t *testing.T) {
	root := t.TempDir()
	h := New(root, newFakeMounter())
	pod := mountsPod()
	pod.Spec.Volumes = append(pod.Spec.Volumes, diskVolume, v1.Volume{Name: "rodisk"})
	desired := func(name string) (volumemanager.PodVolume, bool) {
		v := volumemanager.Volume{Plugin: volumemanager.PluginFC, Block: true, ReadOnly: name == "rodisk"}
		switch name {
		case "cache":
			v = volumemanager.Volume{Plugin: volumemanager.PluginEmptyDir}
		case "disk", "rodisk":
		default:
			return volumemanager.PodVolume{}, false
		}
		return volumemanager.PodVolume{Pod: pod.UID, Name: name, Volume: v}, true
	}
	dev := root + "/pods/uid-1/volumeDevices/kubernetes.io~fc/"
	tests := []struct {
		name    string
		devices []v1.VolumeDevice
		want    string // the devices as "container=host:perms"; or the error's substring
	}{
		{"none", nil, ""},
		{"block volumes", []v1.VolumeDevice{{Name: "disk", DevicePath: "/dev/xvda"}, {Name: "rodisk", DevicePath: "/dev/xvdb"}},
			"/dev/xvda=" + dev + "disk:rwm /dev/xvdb=" + dev + "rodisk:rm"},
		{"unknown volume", []v1.VolumeDevice{{Name: "nope", DevicePath: "/dev/x"}}, `container "c" volumeDevices[0].name: no volume "nope" in spec.volumes`},
		{"not desired", []v1.VolumeDevice{{Name: "etc", DevicePath: "/dev/x"}}, `volumeDevices[0].name: volume "etc" is not mapped`},
		{"no devicePath", []v1.VolumeDevice{{Name: "disk"}}, "volumeDevices[0].devicePath: required"},
		{"a filesystem volume", []v1.VolumeDevice{{Name: "cache", DevicePath: "/dev/x"}}, `volume "cache" is not a block volume`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.ContainerDevices(pod, &v1.Container{Name: "c", VolumeDevices: tt.devices}, desired)
			if err != nil {
				if !strings.Contains(err.Error(), tt.want) || tt.want == "" {
					t.Fatalf("err %v, want %q", err, tt.want)
				}
				return
			}
			var parts []string
			for _, d := range got {
				parts = append(parts, d.GetContainerPath()+"="+d.GetHostPath()+":"+d.GetPermissions())
			}
			if s := strings.Join(parts, " "); s != tt.want {
				t.Fatalf("devices %q, want %q", s, tt.want)
			}
		})
	}
}

// TestContainerMounts maps volumeMounts to host paths and rejects the
// mounts it cannot serve, naming the field.
func TestContainerMounts(t *testing.T) {
	root := t.TempDir()
	m := newFakeMounter()
	h := New(root, m)
	pod := mountsPod()
	cache := volumemanager.PodVolume{Pod: pod.UID, Name: "cache", Volume: volumemanager.Volume{Plugin: volumemanager.PluginEmptyDir}}
	if err := h.Publish(context.Background(), cache); err != nil {
		t.Fatal(err)
	}
	vols, err := volumemanager.DesiredVolumes(context.Background(), pod, nil)
	if err != nil {
		t.Fatal(err)
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, diskVolume)
	desired := func(name string) (volumemanager.PodVolume, bool) {
		for _, pv := range vols {
			if pv.Name == name && name != "undesired" {
				return pv, true
			}
		}
		if name == "disk" {
			return volumemanager.PodVolume{Pod: pod.UID, Name: name, Volume: volumemanager.Volume{Plugin: volumemanager.PluginFC, Block: true}}, true
		}
		return volumemanager.PodVolume{}, false
	}
	cacheDir := PodVolumeDir(root, pod.UID, volumemanager.PluginEmptyDir, "cache")
	if err := os.Symlink("/", filepath.Join(cacheDir, "escape")); err != nil {
		t.Fatal(err)
	}
	// bound is the host path of a sub path: its target, bound from src.
	bound := func(src string) string {
		return SubPathTarget(root, pod.UID, "cache", "c", 0) + "<-" + filepath.Join(cacheDir, src)
	}
	// env is the container's, for subPathExpr.
	env := map[string]string{"POD_NAME": "p", "DOTS": "..", "UP": "a/../../x", "ABS": "/etc", "LINK": "escape", "EMPTY": ""}
	tests := []struct {
		name    string
		mounts  []v1.VolumeMount
		devices []v1.VolumeDevice
		want    string // the mounts as "container=host[:ro]"; or the error's substring
	}{
		{"emptyDir and hostPath", []v1.VolumeMount{{Name: "cache", MountPath: "/cache"}, {Name: "etc", MountPath: "/host-etc", ReadOnly: true}},
			nil, fmt.Sprintf("/cache=%s /host-etc=/etc:ro", cacheDir)},
		{"subPath is created", []v1.VolumeMount{{Name: "cache", MountPath: "/logs", SubPath: "a/b"}}, nil, "/logs=" + bound("a/b")},
		{"csi target", []v1.VolumeMount{{Name: "data", MountPath: "/data"}}, nil, "/data=" + root + "/pods/uid-1/volumes/kubernetes.io~csi/data/mount"},
		{"unknown volume", []v1.VolumeMount{{Name: "nope", MountPath: "/x"}}, nil, `container "c" volumeMounts[0].name: no volume "nope" in spec.volumes`},
		{"not desired", []v1.VolumeMount{{Name: "undesired", MountPath: "/x"}}, nil, `volumeMounts[0].name: volume "undesired" is not mounted`},
		{"read-only csi", []v1.VolumeMount{{Name: "ro", MountPath: "/ro"}}, nil, "/ro=" + root + "/pods/uid-1/volumes/kubernetes.io~csi/ro/mount:ro"},
		{"no mountPath", []v1.VolumeMount{{Name: "cache"}}, nil, "volumeMounts[0].mountPath: required"},
		{"subPath with ..", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPath: "../x"}}, nil, `volumeMounts[0].subPath: "../x" must be a relative path`},
		{"absolute subPath", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPath: "/etc"}}, nil, "must be a relative path"},
		{"subPath through a link out", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPath: "escape/etc"}}, nil, `volumeMounts[0].subPath: failed to prepare subPath for volumeMount "cache" of container "c": "escape/etc" leaves the volume`},
		{"subPath through a link to create outside", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPath: "escape/podhost-must-not-exist"}}, nil, "leaves the volume"},
		{"block volume", []v1.VolumeMount{{Name: "disk", MountPath: "/x"}}, nil, `volumeMounts[0].name: volume "disk" is a block volume`},
		{"subPathExpr from the pod's name", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPathExpr: "$(POD_NAME)"}}, nil, "/x=" + bound("p")},
		{"subPathExpr nested", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPathExpr: "logs/$(POD_NAME)/$$"}}, nil, "/x=" + bound("logs/p/$")},
		{"subPathExpr to ..", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPathExpr: "$(DOTS)"}}, nil, `volumeMounts[0].subPathExpr: ".." must be a relative path without ".."`},
		{"subPathExpr to a path through ..", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPathExpr: "$(UP)"}}, nil, `volumeMounts[0].subPathExpr: "a/../../x" must be a relative path`},
		{"subPathExpr to an absolute path", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPathExpr: "$(ABS)"}}, nil, `volumeMounts[0].subPathExpr: "/etc" must be a relative path`},
		{"subPathExpr through a link out", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPathExpr: "$(LINK)/etc"}}, nil, `volumeMounts[0].subPathExpr: failed to prepare subPath for volumeMount "cache" of container "c": "escape/etc" leaves the volume`},
		{"subPathExpr through a link to create outside", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPathExpr: "$(LINK)/podhost-must-not-exist"}}, nil, `subPathExpr: failed to prepare subPath for volumeMount "cache" of container "c": "escape/podhost-must-not-exist" leaves the volume`},
		{"subPathExpr with an undefined variable", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPathExpr: "$(NOPE)/$(POD_NAME)"}}, nil, `volumeMounts[0].subPathExpr: "$(NOPE)/$(POD_NAME)": missing value for NOPE`},
		{"subPathExpr with an empty variable", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPathExpr: "$(EMPTY)"}}, nil, "missing value for EMPTY"},
		{"subPathExpr beside subPath", []v1.VolumeMount{{Name: "cache", MountPath: "/x", SubPath: "a", SubPathExpr: "$(POD_NAME)"}}, nil, "volumeMounts[0].subPathExpr: subPathExpr and subPath are mutually exclusive"},
		{"volumeDevices are not mounts", []v1.VolumeMount{{Name: "cache", MountPath: "/cache"}}, []v1.VolumeDevice{{Name: "data", DevicePath: "/dev/x"}}, "/cache=" + cacheDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &v1.Container{Name: "c", VolumeMounts: tt.mounts, VolumeDevices: tt.devices}
			got, err := h.ContainerMounts(pod, c, env, desired)
			if err != nil {
				if !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err %v, want %q", err, tt.want)
				}
				return
			}
			var parts []string
			for _, mt := range got {
				s := mt.GetContainerPath() + "=" + mt.GetHostPath()
				if src, ok := m.binds[mt.GetHostPath()]; ok {
					s += "<-" + src
				}
				if mt.GetReadonly() {
					s += ":ro"
				}
				parts = append(parts, s)
			}
			if s := strings.Join(parts, " "); s != tt.want {
				t.Fatalf("mounts %q, want %q", s, tt.want)
			}
		})
	}
}

// TestReconstructEmptyDir lists the pod volume directories and block
// device files (not the log directories next to them) and rebuilds the
// emptyDirs among them.
func TestReconstructEmptyDir(t *testing.T) {
	root := t.TempDir()
	m := newFakeMounter()
	h := New(root, m)
	for _, d := range []string{
		PodVolumeDir(root, "u1", volumemanager.PluginEmptyDir, "disk"),
		PodVolumeDir(root, "u1", volumemanager.PluginEmptyDir, "mem"),
		PodVolumeDir(root, "u2", volumemanager.PluginCSI, "data"),
		filepath.Join(root, "pods", "ns_name_u3", "volumes", "0.log"),
	} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	raw := PodDevicePath(root, "u4", volumemanager.PluginISCSI, "raw")
	if err := os.MkdirAll(filepath.Dir(raw), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(raw, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m.points[PodVolumeDir(root, "u1", volumemanager.PluginEmptyDir, "mem")] = true
	dirs, err := h.PodVolumeDirs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range dirs {
		ans, err := h.Reconstruct(context.Background(), d)
		line := fmt.Sprintf("%s %s %s block=%v: ", d.Pod, d.Plugin, d.Name, d.Block)
		if err != nil {
			line += err.Error()
		} else {
			line += fmt.Sprintf("%s medium=%q published=%v", ans.Volume.ID, ans.Volume.EmptyDir.Medium, ans.Published)
		}
		got = append(got, line)
	}
	want := []string{
		`u1 kubernetes.io/empty-dir disk block=false: kubernetes.io/empty-dir/u1-disk medium="" published=true`,
		`u1 kubernetes.io/empty-dir mem block=false: kubernetes.io/empty-dir/u1-mem medium="Memory" published=true`,
		`u2 kubernetes.io/csi data block=false: not a host volume: plugin kubernetes.io/csi`,
		`u4 kubernetes.io/iscsi raw block=true: not a host volume: plugin kubernetes.io/iscsi`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reconstructed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMountPropagation maps mountPropagation as the kubelet does and
// refuses Bidirectional in a container that is not privileged.
func TestMountPropagation(t *testing.T) {
	privileged := &v1.Container{Name: "c", SecurityContext: &v1.SecurityContext{Privileged: &readOnly}}
	plain := &v1.Container{Name: "c"}
	mode := func(m v1.MountPropagationMode) *v1.MountPropagationMode { return &m }
	tests := []struct {
		name string
		c    *v1.Container
		mode *v1.MountPropagationMode
		want string // the contract's value, or the error
	}{
		{"unset", plain, nil, "MOUNT_PROPAGATION_UNSPECIFIED"},
		{"None", plain, mode(v1.MountPropagationNone), "MOUNT_PROPAGATION_UNSPECIFIED"},
		{"HostToContainer", plain, mode(v1.MountPropagationHostToContainer), "MOUNT_PROPAGATION_HOST_TO_CONTAINER"},
		{"Bidirectional privileged", privileged, mode(v1.MountPropagationBidirectional), "MOUNT_PROPAGATION_BIDIRECTIONAL"},
		{"Bidirectional not privileged", plain, mode(v1.MountPropagationBidirectional), "Bidirectional mount propagation is available only to privileged containers"},
		{"Bidirectional privileged false", &v1.Container{SecurityContext: &v1.SecurityContext{}}, mode(v1.MountPropagationBidirectional), "available only to privileged containers"},
		{"unknown", plain, mode("Sideways"), `unsupported value "Sideways"`},
	}
	for _, tt := range tests {
		got, err := mountPropagation(tt.c, tt.mode)
		s := got.String()
		if err != nil {
			s = err.Error()
		}
		if !strings.Contains(s, tt.want) {
			t.Errorf("%s: %s; want %s", tt.name, s, tt.want)
		}
	}
	pod := mountsPod()
	h := New(t.TempDir(), newFakeMounter())
	desired := func(name string) (volumemanager.PodVolume, bool) {
		return volumemanager.PodVolume{Pod: pod.UID, Name: name, Volume: volumemanager.Volume{Plugin: volumemanager.PluginCSI}}, true
	}
	plain.VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data", MountPropagation: mode(v1.MountPropagationBidirectional)}}
	if _, err := h.ContainerMounts(pod, plain, nil, desired); err == nil || !strings.Contains(err.Error(), `container "c" volumeMounts[0].mountPropagation: Bidirectional`) {
		t.Errorf("ContainerMounts of Bidirectional, not privileged: %v; want the field named", err)
	}
	plain.VolumeMounts[0].MountPropagation = mode(v1.MountPropagationHostToContainer)
	if m, err := h.ContainerMounts(pod, plain, nil, desired); err != nil || m[0].GetPropagation() != runtimev1.MountPropagation_MOUNT_PROPAGATION_HOST_TO_CONTAINER {
		t.Errorf("ContainerMounts of HostToContainer: %v, %v", m, err)
	}
}
