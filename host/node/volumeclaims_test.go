package node

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/sources"
)

func TestAPIClaims(t *testing.T) {
	pvc := func(volume string, phase v1.PersistentVolumeClaimPhase) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "data", UID: "c1"},
			Spec: v1.PersistentVolumeClaimSpec{VolumeName: volume}, Status: v1.PersistentVolumeClaimStatus{Phase: phase}}
	}
	pv := func(ref string) *v1.PersistentVolume {
		p := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}}
		if ref != "" {
			p.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: ref}
		}
		return p
	}
	tests := []struct {
		name     string
		objs     []runtime.Object
		wantPV   string
		wantErr  string
		notBound bool
	}{
		{"bound", []runtime.Object{pvc("pv1", v1.ClaimBound), pv("data")}, "pv1", "", false},
		{"no claim", nil, "", "no PersistentVolumeClaim default/data in the API server", false},
		{"no volumeName", []runtime.Object{pvc("", v1.ClaimPending)}, "", `PersistentVolumeClaim default/data (phase "Pending", volumeName "") is not bound`, true},
		{"volumeName but pending", []runtime.Object{pvc("pv1", v1.ClaimPending), pv("data")}, "", `phase "Pending"`, true},
		{"volume bound to another claim", []runtime.Object{pvc("pv1", v1.ClaimBound), pv("other")}, "", "bound to claim default/other", true},
		{"volume missing", []runtime.Object{pvc("pv1", v1.ClaimBound)}, "", "reading PersistentVolume pv1 of claim default/data", false},
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: "u1"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &apiClaims{client: fake.NewClientset(tt.objs...)}
			_, got, err := c.PersistentVolume(t.Context(), pod, "data")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v; want it to contain %q", err, tt.wantErr)
				}
				if errors.Is(err, volumemanager.ErrClaimNotBound) != tt.notBound {
					t.Errorf("errors.Is(ErrClaimNotBound) = %v; want %v", !tt.notBound, tt.notBound)
				}
				return
			}
			if err != nil || got == nil || got.Name != tt.wantPV {
				t.Fatalf("got %v, %v; want volume %s", got, err, tt.wantPV)
			}
		})
	}
}

// A pod of the API server resolves its claims there; every other pod,
// static pods included, against the sources.
func TestPodClaimsRoute(t *testing.T) {
	static := &staticClaims{}
	static.set(sources.Desired{
		Claims:  []sources.Claim{{Claim: &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "data"}, Spec: v1.PersistentVolumeClaimSpec{VolumeName: "local-pv"}}}},
		Volumes: []sources.Volume{{Volume: &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "local-pv"}}}},
	})
	api := &apiClaims{client: fake.NewClientset(
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "data"}, Spec: v1.PersistentVolumeClaimSpec{VolumeName: "api-pv"}, Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound}},
		&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "api-pv"}},
	)}
	origins := map[types.UID]string{"api": sources.SourceAPIServer, "static": sources.SourceFile}
	c := podClaims{static: static, api: api, origin: func(uid types.UID) (sources.Origin, bool) {
		s, ok := origins[uid]
		return sources.Origin{Source: s}, ok
	}}
	for uid, want := range map[types.UID]string{"api": "api-pv", "static": "local-pv", "unknown": "local-pv"} {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: uid}}
		_, pv, err := c.PersistentVolume(t.Context(), pod, "data")
		if err != nil || pv == nil || pv.Name != want {
			t.Errorf("pod %s: got %v, %v; want volume %s", uid, pv, err, want)
		}
	}
}
