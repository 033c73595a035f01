package apivolumes

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// TestFSGroupOwnsTheVolume: the projected volume of a pod with an fsGroup
// belongs to that group before a container sees it, with group read
// added (the token 0640, not 0644), setgid directories; a refresh with
// nothing new writes nothing.
func TestFSGroupOwnsTheVolume(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test changes file groups; run it as root")
	}
	clock := lifecycletest.NewFakeClock(time.Unix(1000, 0))
	c := &fakeClient{clock: clock, ttl: time.Hour, cms: map[string]*v1.ConfigMap{
		"default/kube-root-ca.crt": {Data: map[string]string{"ca.crt": "ca-1"}}}}
	group := int64(1234)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "u1"}, Spec: v1.PodSpec{ServiceAccountName: "default"}}
	root := t.TempDir()
	vols := New(Config{Root: root, Client: every(c), Clock: clock, Pod: func(uid types.UID) (*v1.Pod, bool) { return pod, uid == pod.UID }})
	src := kubeAPIAccess()
	src.DefaultMode = new(int32(0o400))
	pv := volumemanager.PodVolume{Pod: "u1", Name: "kube-api-access-x", Args: volumemanager.MountArgs{FSGroup: &group},
		Volume: volumemanager.Volume{Plugin: volumemanager.PluginProjected, Projected: src}}
	if err := vols.Publish(t.Context(), pv); err != nil {
		t.Fatal(err)
	}
	dir := vols.Dir(pv)
	want := map[string]fs.FileMode{"token": 0o640, "ca.crt": 0o440, "namespace": 0o440, "..data": fs.ModeDir | fs.ModeSetgid | 0o755}
	check := func() {
		t.Helper()
		for name, mode := range want {
			fi, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != mode {
				t.Errorf("%s: mode %v, want %v", name, fi.Mode(), mode)
			}
			if g := fi.Sys().(*syscall.Stat_t).Gid; g != 1234 {
				t.Errorf("%s: group %d, want 1234", name, g)
			}
		}
	}
	check()
	version, err := os.Readlink(filepath.Join(dir, dataLink))
	if err != nil {
		t.Fatal(err)
	}
	vols.Refresh(t.Context())
	if again, _ := os.Readlink(filepath.Join(dir, dataLink)); again != version {
		t.Errorf("a refresh with nothing new wrote a new version %s (was %s)", again, version)
	}
	check()
}
