package node

import (
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestCSIFSGroupPolicy: in Kubernetes mode a CSI driver's fsGroupPolicy
// is its CSIDriver object's, the default when it has none or there is no
// object; outside Kubernetes mode there is no reader (the default).
func TestCSIFSGroupPolicy(t *testing.T) {
	file := storagev1.FileFSGroupPolicy
	client := fake.NewClientset(
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "file.csi"}, Spec: storagev1.CSIDriverSpec{FSGroupPolicy: &file}},
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "plain.csi"}},
	)
	n := &Node{cfg: Config{Kubernetes: KubeConfig{Client: client}}}
	policy := n.csiFSGroupPolicy()
	for driver, want := range map[string]storagev1.FSGroupPolicy{
		"file.csi":    storagev1.FileFSGroupPolicy,
		"plain.csi":   storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy,
		"unknown.csi": storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy,
	} {
		got, err := policy(t.Context(), driver)
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", driver, got, err, want)
		}
	}
	if (&Node{}).csiFSGroupPolicy() != nil {
		t.Error("a reader outside Kubernetes mode")
	}
}
