package runtimemanager

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kptr "k8s.io/utils/ptr"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func securePod(pod *v1.PodSecurityContext, c *v1.SecurityContext) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"}, Spec: v1.PodSpec{
		SecurityContext: pod, Containers: []v1.Container{{Name: "app", SecurityContext: c}},
	}}
}

func TestContainerSecurityMergesPodAndContainer(t *testing.T) {
	m := &Manager{opts: Options{SeccompProfileRoot: "/var/lib/podhost/seccomp"}}
	pod := securePod(&v1.PodSecurityContext{
		RunAsUser: kptr.To[int64](1000), RunAsGroup: kptr.To[int64](3000), SupplementalGroups: []int64{4000},
		SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
	}, &v1.SecurityContext{
		RunAsUser: kptr.To[int64](2000), AllowPrivilegeEscalation: kptr.To(false), ReadOnlyRootFilesystem: kptr.To(true),
		Capabilities:   &v1.Capabilities{Add: []v1.Capability{"NET_BIND_SERVICE"}, Drop: []v1.Capability{"ALL"}},
		SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: kptr.To("audit.json")},
	})
	got := m.containerSecurity(pod, &pod.Spec.Containers[0])
	if got.GetRunAsUser() != 2000 || got.GetRunAsGroup() != 3000 || !got.GetNoNewPrivs() || !got.GetReadonlyRootfs() ||
		got.GetSupplementalGroups()[0] != 4000 || got.GetAddCapabilities()[0] != "NET_BIND_SERVICE" || got.GetDropCapabilities()[0] != "ALL" ||
		got.GetSeccomp().GetLocalhostRef() != "/var/lib/podhost/seccomp/audit.json" {
		t.Errorf("container security: %v", got)
	}
	pod.Spec.Containers[0].SecurityContext = nil
	got = m.containerSecurity(pod, &pod.Spec.Containers[0])
	if got.GetRunAsUser() != 1000 || got.GetNoNewPrivs() || got.GetSeccomp().GetProfileType() != runtimev1.SecurityProfile_PROFILE_TYPE_RUNTIME_DEFAULT {
		t.Errorf("pod's security where the container sets none: %v", got)
	}
	if got := m.containerSecurity(securePod(nil, nil), &v1.Container{}); got.GetSeccomp().GetProfileType() != runtimev1.SecurityProfile_PROFILE_TYPE_UNCONFINED || got.RunAsUser != nil {
		t.Errorf("nothing set: %v; want unconfined, the image's user", got)
	}
}

func TestVerifyNonRoot(t *testing.T) {
	uid0, uid1000 := int64(0), int64(1000)
	tests := []struct {
		name string
		pod  *v1.Pod
		img  *runtimev1.Image
		want string // "" for no error
	}{
		{"not asked", securePod(nil, nil), nil, ""},
		{"explicit root", securePod(&v1.PodSecurityContext{RunAsNonRoot: kptr.To(true)}, &v1.SecurityContext{RunAsUser: kptr.To[int64](0)}), nil, "runAsUser breaks non-root policy"},
		{"explicit user", securePod(&v1.PodSecurityContext{RunAsNonRoot: kptr.To(true), RunAsUser: kptr.To[int64](1000)}, nil), nil, ""},
		{"image without user", securePod(nil, &v1.SecurityContext{RunAsNonRoot: kptr.To(true)}), &runtimev1.Image{}, "image will run as root"},
		{"image uid 0", securePod(&v1.PodSecurityContext{RunAsNonRoot: kptr.To(true)}, nil), &runtimev1.Image{Uid: &uid0}, "image will run as root"},
		{"image user name", securePod(&v1.PodSecurityContext{RunAsNonRoot: kptr.To(true)}, nil), &runtimev1.Image{Username: "nobody"}, "non-numeric user (nobody)"},
		{"image uid 1000", securePod(&v1.PodSecurityContext{RunAsNonRoot: kptr.To(true)}, nil), &runtimev1.Image{Uid: &uid1000}, ""},
		{"container says false", securePod(&v1.PodSecurityContext{RunAsNonRoot: kptr.To(true)}, &v1.SecurityContext{RunAsNonRoot: kptr.To(false)}), &runtimev1.Image{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := verifyNonRoot(tt.pod, &tt.pod.Spec.Containers[0], tt.img)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v; want none", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v; want %q", err, tt.want)
			case err != nil && !strings.Contains(err.Error(), `(pod: "web_default(u1)", container: app)`):
				t.Errorf("got %v; want the pod and container named", err)
			}
		})
	}
}

// TestFSGroupIsASupplementalGroup: the pod's fsGroup is a group of every
// container's process and of the sandbox, before supplementalGroups, as
// the kubelet gives it, so that the processes may use the volumes given to
// that group.
func TestFSGroupIsASupplementalGroup(t *testing.T) {
	m := &Manager{}
	pod := securePod(&v1.PodSecurityContext{FSGroup: kptr.To[int64](1234), SupplementalGroups: []int64{4000}}, &v1.SecurityContext{RunAsUser: kptr.To[int64](1000)})
	want := []int64{1234, 4000}
	if got := m.containerSecurity(pod, &pod.Spec.Containers[0]).GetSupplementalGroups(); !slices.Equal(got, want) {
		t.Errorf("container's groups %v, want %v", got, want)
	}
	if got := m.sandboxSecurity(pod).GetSupplementalGroups(); !slices.Equal(got, want) {
		t.Errorf("sandbox's groups %v, want %v", got, want)
	}
	pod.Spec.SecurityContext.SupplementalGroups = nil
	if got := m.containerSecurity(pod, &pod.Spec.Containers[0]).GetSupplementalGroups(); !slices.Equal(got, []int64{1234}) {
		t.Errorf("container's groups %v, want [1234]", got)
	}
}
