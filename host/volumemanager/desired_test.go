package volumemanager

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pvResolver returns one fixed PV for every claim.
type pvResolver struct{ pv *v1.PersistentVolume }

func (r pvResolver) PersistentVolume(context.Context, *v1.Pod, string) (*v1.PersistentVolumeClaim, *v1.PersistentVolume, error) {
	return nil, r.pv, nil
}

func TestDesiredVolumes(t *testing.T) {
	lun := int32(3)
	pv := func(src v1.PersistentVolumeSource) *v1.PersistentVolume {
		return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}, Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: src}}
	}
	claim := v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}
	tests := []struct {
		name    string
		src     v1.VolumeSource
		pv      *v1.PersistentVolume
		wantID  VolumeID
		wantErr string
	}{
		{"inline csi", v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "d"}}, nil, "kubernetes.io/csi/u1-v", ""},
		{"inline csi without driver", v1.VolumeSource{CSI: &v1.CSIVolumeSource{}}, nil, "", "spec.volumes[0].csi.driver: required"},
		{"emptyDir", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, nil, "kubernetes.io/empty-dir/u1-v", ""},
		{"emptyDir memory", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}, nil, "kubernetes.io/empty-dir/u1-v", ""},
		{"emptyDir hugepages", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumHugePages}}, nil, "", `spec.volumes[0].emptyDir.medium: unsupported "HugePages"`},
		{"hostPath", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/srv"}}, nil, "kubernetes.io/host-path/u1-v", ""},
		{"hostPath without path", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{}}, nil, "", "spec.volumes[0].hostPath.path: required"},
		{"configMap", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}, nil, "kubernetes.io/configmap/u1-v", ""},
		{"projected", v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{}}, nil, "kubernetes.io/projected/u1-v", ""},
		{"nfs", v1.VolumeSource{NFS: &v1.NFSVolumeSource{}}, nil, "", "spec.volumes[0].nfs: unsupported volume source"},
		{"no source", v1.VolumeSource{}, nil, "", "spec.volumes[0]: no volume source"},
		{"claim without name", v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{}}, nil, "", "spec.volumes[0].persistentVolumeClaim.claimName: required"},
		{"pv csi", claim, pv(v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}), "kubernetes.io/csi/d^h", ""},
		{"pv csi without handle", claim, pv(v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "d"}}), "", "persistentVolume pv1 spec.csi.volumeHandle: required"},
		{"pv fc wwns", claim, pv(v1.PersistentVolumeSource{FC: &v1.FCVolumeSource{TargetWWNs: []string{"w1", "w2"}, Lun: &lun}}), "kubernetes.io/fc/[w1 w2]:3", ""},
		{"pv fc wwids", claim, pv(v1.PersistentVolumeSource{FC: &v1.FCVolumeSource{WWIDs: []string{"a", "b"}}}), "kubernetes.io/fc/[a b]", ""},
		{"pv fc lun without wwns", claim, pv(v1.PersistentVolumeSource{FC: &v1.FCVolumeSource{Lun: &lun}}), "", "persistentVolume pv1 spec.fc.targetWWNs: required with lun"},
		{"pv fc empty", claim, pv(v1.PersistentVolumeSource{FC: &v1.FCVolumeSource{}}), "", "persistentVolume pv1 spec.fc: targetWWNs with lun, or wwids, required"},
		{"pv iscsi", claim, pv(v1.PersistentVolumeSource{ISCSI: &v1.ISCSIPersistentVolumeSource{TargetPortal: "p:3260", IQN: "iqn.x", Lun: 1}}), "kubernetes.io/iscsi/p:3260:iqn.x:1", ""},
		{"pv iscsi without iqn", claim, pv(v1.PersistentVolumeSource{ISCSI: &v1.ISCSIPersistentVolumeSource{TargetPortal: "p"}}), "", "persistentVolume pv1 spec.iscsi.iqn: required"},
		{"pv nfs", claim, pv(v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{}}), "", "persistentVolume pv1 spec.nfs: unsupported volume source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1", Namespace: "ns"}}
			pod.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: tt.src}}
			got, err := DesiredVolumes(context.Background(), pod, pvResolver{tt.pv})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidVolume) {
					t.Fatalf("err %v, want one containing %q wrapping ErrInvalidVolume", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Volume.ID != tt.wantID || got[0].Name != "v" || got[0].Pod != "u1" {
				t.Fatalf("got %+v, want one volume %s", got, tt.wantID)
			}
			if shared := tt.pv != nil; got[0].Volume.Shared != shared {
				t.Errorf("shared %v, want %v", got[0].Volume.Shared, shared)
			}
		})
	}
}

// TestDesiredVolumesMountOptions: a PersistentVolume's mountOptions go
// with its volume (the plugins mount the device with them).
func TestDesiredVolumesMountOptions(t *testing.T) {
	block := v1.PersistentVolumeBlock
	tests := []struct {
		name string
		spec v1.PersistentVolumeSpec
		want []string
	}{
		{name: "none", spec: v1.PersistentVolumeSpec{}},
		{name: "iscsi", spec: v1.PersistentVolumeSpec{MountOptions: []string{"noatime", "commit=30"}}, want: []string{"noatime", "commit=30"}},
		{name: "block", spec: v1.PersistentVolumeSpec{MountOptions: []string{"noatime"}, VolumeMode: &block}, want: []string{"noatime"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}, Spec: tt.spec}
			pv.Spec.ISCSI = &v1.ISCSIPersistentVolumeSource{TargetPortal: "p:3260", IQN: "iqn.x"}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1", Namespace: "ns"}}
			pod.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
			got, err := DesiredVolumes(context.Background(), pod, pvResolver{pv})
			if err != nil || len(got) != 1 || !slices.Equal(got[0].Volume.MountOptions, tt.want) {
				t.Fatalf("got %+v, %v; want mount options %q", got, err, tt.want)
			}
		})
	}
}

func TestDesiredVolumesResolverError(t *testing.T) {
	pod := testPod("u1", "pvc:missing")
	_, err := DesiredVolumes(context.Background(), pod, testResolver{})
	if err == nil || !strings.Contains(err.Error(), "spec.volumes[0].persistentVolumeClaim: claim ns/missing: not found") {
		t.Fatalf("err %v", err)
	}
	if _, err := DesiredVolumes(context.Background(), pod, nil); err == nil || !strings.Contains(err.Error(), "no claim resolver") {
		t.Fatalf("nil resolver: err %v", err)
	}
}

// TestInlineCSIHandle: an inline CSI volume's handle is the kubelet's,
// "csi-" and the sha256 of the pod UID and the volume's name, and its
// context says it is ephemeral only through the adapter, not here.
func TestInlineCSIHandle(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1", Namespace: "ns"}}
	pod.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "d", VolumeAttributes: map[string]string{"size": "1Mi"}}}}}
	got, err := DesiredVolumes(context.Background(), pod, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("u1v"))
	if want := "csi-" + hex.EncodeToString(sum[:]); got[0].Volume.CSI.VolumeHandle != want || got[0].Volume.CSI.VolumeAttributes["size"] != "1Mi" {
		t.Errorf("inline csi source %+v; want handle %s and the attributes", got[0].Volume.CSI, want)
	}
}

// TestCSISecretRefs: an inline CSI volume's publish Secret is the one of
// that name in the pod's namespace, a PersistentVolume's are its own
// references, and both name the pod whose Secrets they are.
func TestCSISecretRefs(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1", Namespace: "ns"}}
	pod.Spec.Volumes = []v1.Volume{
		{Name: "inline", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: &v1.LocalObjectReference{Name: "creds"}}}},
		{Name: "claim", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}},
	}
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}, Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{
		Driver: "d", VolumeHandle: "h", NodeStageSecretRef: &v1.SecretReference{Namespace: "other", Name: "stage"}}}}}
	got, err := DesiredVolumes(t.Context(), pod, pvResolver{pv})
	if err != nil {
		t.Fatal(err)
	}
	if ref := got[0].Volume.CSI.NodePublishSecretRef; ref == nil || *ref != (v1.SecretReference{Namespace: "ns", Name: "creds"}) || got[0].Volume.ForPod != "u1" {
		t.Errorf("inline volume: ref %v, pod %q; want ns/creds of u1", ref, got[0].Volume.ForPod)
	}
	if ref := got[1].Volume.CSI.NodeStageSecretRef; ref == nil || ref.Namespace != "other" || got[1].Volume.ForPod != "u1" {
		t.Errorf("claim volume: stage ref %v, pod %q; want other/stage of u1", ref, got[1].Volume.ForPod)
	}
}

// TestPublishCarriesThePodsMountArgs: the pod's fsGroup and change policy
// reach the publish of each of its volumes (the kubelet's MounterArgs), so
// that the volume's set-up code can give the volume to the group.
func TestPublishCarriesThePodsMountArgs(t *testing.T) {
	group, policy := int64(1234), v1.FSGroupChangeOnRootMismatch
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1", Namespace: "ns"}}
	pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: &group, FSGroupChangePolicy: &policy}
	pod.Spec.Volumes = []v1.Volume{
		{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/srv"}}},
	}
	vols, err := DesiredVolumes(context.Background(), pod, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReconciler(testClassifier)
	r.SetPod(pod.UID, vols)
	ops := r.Step(time.Unix(0, 0))
	if len(ops) != 2 {
		t.Fatalf("ops %v, want two publishes", ops)
	}
	for _, op := range ops {
		if op.Args.FSGroup == nil || *op.Args.FSGroup != group || op.Args.FSGroupChangePolicy == nil || *op.Args.FSGroupChangePolicy != policy {
			t.Errorf("%v: args %+v, want fsGroup %d and policy %s", op, op.Args, group, policy)
		}
	}
	p := &recordingPlugins{}
	if err := call(context.Background(), p, ops[0]); err != nil {
		t.Fatal(err)
	}
	if got := p.published.Args; got != ops[0].Args {
		t.Errorf("the plugin got args %+v, want %+v", got, ops[0].Args)
	}
}

// recordingPlugins records the last publish.
type recordingPlugins struct {
	Plugins
	published PodVolume
}

func (p *recordingPlugins) Publish(_ context.Context, pv PodVolume) error {
	p.published = pv
	return nil
}
