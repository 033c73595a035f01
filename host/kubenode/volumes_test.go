package kubenode

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestVolumesInUse: the status carries the volumes in use once the node
// knows them, keeps the Node's list while it does not, and every list the
// API server accepted is handed to VolumesReported.
func TestVolumesInUse(t *testing.T) {
	const vol = v1.UniqueVolumeName("kubernetes.io/csi/drv^h1")
	existing := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: v1.NodeStatus{VolumesInUse: []v1.UniqueVolumeName{"kubernetes.io/csi/drv^old"}}}
	a, cs, _ := fakeAgent(t, existing)
	var inUse []v1.UniqueVolumeName
	known := false
	var reported [][]v1.UniqueVolumeName
	a.o.VolumesInUse = func() ([]v1.UniqueVolumeName, bool) { return inUse, known }
	a.o.VolumesReported = func(names []v1.UniqueVolumeName) { reported = append(reported, names) }
	s := newStatusLoop(a)
	if err := s.register(t.Context()); err != nil {
		t.Fatal(err)
	}
	read := func() []v1.UniqueVolumeName {
		t.Helper()
		n, err := cs.CoreV1().Nodes().Get(t.Context(), "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n.Status.VolumesInUse
	}
	if got := read(); !slices.Equal(got, existing.Status.VolumesInUse) {
		t.Errorf("volumesInUse %v while the node does not know its volumes; want the Node's %v kept", got, existing.Status.VolumesInUse)
	}

	inUse, known = []v1.UniqueVolumeName{vol}, true
	if changed := nodeChanged(s.last, applyNode(s.last, a.observe(t.Context()), a.o.Clock.Now())); !changed {
		t.Error("a new volume in use is no change of the status; want it posted at once")
	}
	n, err := s.post(t.Context(), a.observe(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	s.wrote(n, true)
	if got := read(); !slices.Equal(got, []v1.UniqueVolumeName{vol}) {
		t.Errorf("volumesInUse %v; want [%s]", got, vol)
	}

	inUse = nil
	n, err = s.post(t.Context(), a.observe(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	s.wrote(n, true)
	if got := read(); len(got) != 0 {
		t.Errorf("volumesInUse %v after the last volume left; want none", got)
	}
	want := [][]v1.UniqueVolumeName{existing.Status.VolumesInUse, {vol}, nil}
	if !slices.EqualFunc(reported, want, func(a, b []v1.UniqueVolumeName) bool { return slices.Equal(a, b) }) {
		t.Errorf("reported %v; want %v", reported, want)
	}
}
