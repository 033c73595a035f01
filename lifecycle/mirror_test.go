package lifecycle_test

import (
	"errors"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// stoppingByName is a pod state that also answers whether a static pod
// under a full name still stops.
type stoppingByName struct {
	*fakePodState
	stopping map[string]bool
}

func (s stoppingByName) IsPodForMirrorPodTerminatingByFullName(name string) bool {
	return s.stopping[name]
}

func staticPod(hash string) *v1.Pod {
	p := apiPod("s1", "web-n1")
	p.Spec.Containers = p.Spec.Containers[:1]
	p.Annotations = map[string]string{lifecycle.ConfigSourceAnnotation: "file", lifecycle.ConfigHashAnnotation: hash}
	return p
}

func mirrorPod(uid, hash string, deleting bool) *v1.Pod {
	m := apiPod(uid, "web-n1")
	m.Annotations = map[string]string{lifecycle.ConfigSourceAnnotation: "api", lifecycle.ConfigMirrorAnnotation: hash}
	if deleting {
		now := metav1.Now()
		m.DeletionTimestamp = &now
	}
	return m
}

// TestSyncPodKeepsTheMirrorCurrent checks the mirror step of SyncPod,
// judged from the calls made to the API: a missing mirror is created, an
// outdated or deleted one is replaced, a current one is left alone, a pod
// from the API server gets none, a stopping namesake keeps the old mirror,
// and a failing API never fails the sync.
func TestSyncPodKeepsTheMirrorCurrent(t *testing.T) {
	for _, tc := range []struct {
		name           string
		pod, mirror    *v1.Pod
		stopping       bool
		createErr      error
		wantDeleted    []string
		wantCreated    []string
		wantContainers int
	}{
		{"no mirror yet", staticPod("h1"), nil, false, nil, nil, []string{"web-n1_ns h1"}, 1},
		{"current mirror", staticPod("h1"), mirrorPod("m1", "h1", false), false, nil, nil, nil, 1},
		{"mirror of older content", staticPod("h2"), mirrorPod("m1", "h1", false), false, nil, []string{"web-n1_ns m1"}, []string{"web-n1_ns h2"}, 1},
		{"mirror being deleted", staticPod("h1"), mirrorPod("m1", "h1", true), false, nil, []string{"web-n1_ns m1"}, []string{"web-n1_ns h1"}, 1},
		{"outdated mirror of a namesake that still stops", staticPod("h2"), mirrorPod("m1", "h1", false), true, nil, nil, nil, 1},
		{"a pod from the API server", apiPod("a1", "api-pod"), nil, false, nil, nil, nil, 2},
		{"creation fails: the pod still starts", staticPod("h1"), nil, false, errors.New("api down"), nil, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newStatusEnv()
			mirrors := &lifecycletest.FakeMirrorDeleter{CreateErr: tc.createErr}
			rt := lifecycletest.NewFakeRuntime()
			state := stoppingByName{e.state, map[string]bool{"web-n1_ns": tc.stopping}}
			s := &lifecycle.Syncer{Runtime: rt, Status: e.m, Pods: state, Mirrors: mirrors}
			if _, err := s.SyncPod(t.Context(), lifecycle.UpdateCreate, tc.pod, tc.mirror, &lifecycle.PodStatus{ID: tc.pod.UID}); err != nil {
				t.Fatalf("SyncPod: %v", err)
			}
			if got := mirrors.Deleted(); !slices.Equal(got, tc.wantDeleted) {
				t.Errorf("deleted %q; want %q", got, tc.wantDeleted)
			}
			if got := mirrors.Created(); !slices.Equal(got, tc.wantCreated) {
				t.Errorf("created %q; want %q", got, tc.wantCreated)
			}
			starts := 0
			for _, c := range rt.Calls() {
				if len(c) > 6 && c[:6] == "start " {
					starts++
				}
			}
			if starts != tc.wantContainers {
				t.Errorf("%d container starts; want %d", starts, tc.wantContainers)
			}
		})
	}
}

func TestIsMirrorPodOf(t *testing.T) {
	if !lifecycle.IsMirrorPodOf(mirrorPod("m", "h", false), staticPod("h")) {
		t.Error("mirror with the static pod's hash not recognised")
	}
	if lifecycle.IsMirrorPodOf(mirrorPod("m", "h", false), staticPod("other")) {
		t.Error("mirror of other content recognised")
	}
	noHash := staticPod("h")
	delete(noHash.Annotations, lifecycle.ConfigHashAnnotation)
	if lifecycle.IsMirrorPodOf(mirrorPod("m", "", false), noHash) {
		t.Error("a static pod without a hash has no mirror")
	}
}
