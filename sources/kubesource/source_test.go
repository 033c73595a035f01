package kubesource

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/podhost/podhost/sources"
)

// testWait bounds every wait on the source's goroutines.
const testWait = 30 * time.Second

var seenAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func pod(name string, uid types.UID, annotations map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: uid, Annotations: annotations},
		Spec:       v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Name: "app", Image: "busybox"}}},
	}
}

// run starts the source and stops it when the test ends.
func run(t *testing.T, s *Source) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func newSource(client *fake.Clientset) *Source {
	return New(Options{Client: client, NodeName: "n1", Now: func() time.Time { return seenAt }})
}

// waitSnapshot reads snapshots until one satisfies cond.
func waitSnapshot(t *testing.T, s *Source, what string, cond func(sources.Snapshot) bool) sources.Snapshot {
	t.Helper()
	deadline := time.After(testWait)
	var last sources.Snapshot
	for {
		select {
		case last = <-s.Updates():
			if cond(last) {
				return last
			}
		case <-deadline:
			t.Fatalf("no snapshot with %s; last: %+v", what, names(last))
		}
	}
}

func names(s sources.Snapshot) []string {
	var out []string
	for _, p := range s.Pods {
		out = append(out, p.Origin.Key)
	}
	return out
}

func TestFirstSnapshotWaitsForTheInitialList(t *testing.T) {
	client := fake.NewClientset(pod("a", "uid-a", nil), pod("b", "uid-b", nil))
	listing, release := make(chan k8stesting.ListAction, 1), make(chan struct{})
	client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		listing <- a.(k8stesting.ListAction)
		<-release
		return false, nil, nil
	})
	s := newSource(client)
	run(t, s)

	var list k8stesting.ListAction
	select {
	case list = <-listing:
	case <-time.After(testWait):
		t.Fatal("the source never listed")
	}
	if got := list.GetListRestrictions().Fields.String(); got != "spec.nodeName=n1" {
		t.Errorf("list field selector %q, want spec.nodeName=n1", got)
	}
	// The list has not returned: nothing may be reported yet.
	select {
	case <-s.Synced():
		t.Error("Synced closed before the initial list returned")
	default:
	}
	if len(s.Updates()) != 0 {
		t.Error("a snapshot was sent before the initial list returned")
	}
	close(release)

	first := waitSnapshot(t, s, "any pods", func(sources.Snapshot) bool { return true })
	if got := names(first); len(got) != 2 || got[0] != "default/a" || got[1] != "default/b" {
		t.Errorf("first snapshot %v, want the whole initial list [default/a default/b]", got)
	}
	select {
	case <-s.Synced():
	default:
		t.Error("Synced not closed once the first snapshot was sent")
	}
}

func TestSnapshotsFollowTheAPIServer(t *testing.T) {
	client := fake.NewClientset()
	watching := make(chan struct{}, 1)
	client.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		select {
		case watching <- struct{}{}:
		default:
		}
		return false, nil, nil
	})
	s := newSource(client)
	run(t, s)
	if got := names(waitSnapshot(t, s, "the empty list", func(sources.Snapshot) bool { return true })); len(got) != 0 {
		t.Fatalf("first snapshot %v, want none", got)
	}
	select {
	case <-watching:
	case <-time.After(testWait):
		t.Fatal("the source never watched")
	}
	ctx := t.Context()
	pods := client.CoreV1().Pods("default")
	has := func(key string) func(sources.Snapshot) bool {
		return func(s sources.Snapshot) bool {
			for _, n := range names(s) {
				if n == key {
					return true
				}
			}
			return false
		}
	}

	if _, err := pods.Create(ctx, pod("web", "uid-web", map[string]string{"team": "a"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	snap := waitSnapshot(t, s, "web", has("default/web"))
	got := snap.Pods[0]
	want := map[string]string{"team": "a", AnnotationSource: SourceValue, AnnotationSeen: seenAt.Format(time.RFC3339Nano)}
	for k, v := range want {
		if got.Pod.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, got.Pod.Annotations[k], v)
		}
	}
	if got.Origin != (sources.Origin{Source: sources.SourceAPIServer, Key: "default/web", Where: "apiserver pod default/web"}) {
		t.Errorf("origin %+v", got.Origin)
	}
	if p, ok := s.Get("default", "web"); !ok || p.UID != "uid-web" || p.Annotations[AnnotationSource] != "" {
		t.Errorf("Get(default, web) = %v, %v; want the API server's pod, unannotated", p, ok)
	}

	// config.seen stays what it was when the UID was first seen.
	s.opts.Now = func() time.Time { return seenAt.Add(time.Hour) }
	web, _ := pods.Get(ctx, "web", metav1.GetOptions{})
	web.Labels = map[string]string{"v": "2"}
	if _, err := pods.Update(ctx, web, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	snap = waitSnapshot(t, s, "web relabelled", func(s sources.Snapshot) bool {
		return len(s.Pods) == 1 && s.Pods[0].Pod.Labels["v"] == "2"
	})
	if seen := snap.Pods[0].Pod.Annotations[AnnotationSeen]; seen != seenAt.Format(time.RFC3339Nano) {
		t.Errorf("config.seen after an update %q, want the first sight %s", seen, seenAt)
	}

	// A mirror pod is not run from this source.
	mirror := pod("static-n1", "uid-mirror", map[string]string{AnnotationMirror: "hash"})
	if _, err := pods.Create(ctx, mirror, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, pod("zz", "uid-zz", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	snap = waitSnapshot(t, s, "zz", has("default/zz"))
	if has("default/static-n1")(snap) {
		t.Errorf("snapshot %v has the mirror pod", names(snap))
	}

	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSnapshot(t, s, "web gone", func(s sources.Snapshot) bool { return !has("default/web")(s) })
}

// TestSnapshotPodsHaveTheRuntimesContainerIDs checks that the pods of a
// snapshot carry their containers' IDs as the runtime knows them, without
// the "containerd://" the API server shows: the node looks containers up
// by those IDs.
func TestSnapshotPodsHaveTheRuntimesContainerIDs(t *testing.T) {
	p := pod("a", "uid-a", nil)
	p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", ContainerID: "containerd://abc",
		LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ContainerID: "containerd://old"}}}}
	client := fake.NewClientset(p)
	s := newSource(client)
	run(t, s)
	snap := waitSnapshot(t, s, "pod a", func(s sources.Snapshot) bool { return len(s.Pods) == 1 })
	c := snap.Pods[0].Pod.Status.ContainerStatuses[0]
	if c.ContainerID != "abc" || c.LastTerminationState.Terminated.ContainerID != "old" {
		t.Errorf("container IDs %q and %q; want abc and old", c.ContainerID, c.LastTerminationState.Terminated.ContainerID)
	}
	if got, _ := s.Get("default", "a"); got.Status.ContainerStatuses[0].ContainerID != "containerd://abc" {
		t.Errorf("the informer's pod was changed: %q", got.Status.ContainerStatuses[0].ContainerID)
	}
}
