package kubestatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/podhost/podhost/lifecycle"
)

var podsResource = schema.GroupResource{Resource: "pods"}

func apiPod(uid types.UID, status v1.PodStatus) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: uid}, Status: status}
}

// patches returns the bodies of the status patches the client sent.
func patches(t *testing.T, c *fake.Clientset) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, a := range c.Actions() {
		p, ok := a.(k8stesting.PatchAction)
		if !ok {
			continue
		}
		if p.GetSubresource() != "status" || p.GetPatchType() != types.StrategicMergePatchType {
			t.Errorf("patch of subresource %q type %s; want a strategic merge patch of status", p.GetSubresource(), p.GetPatchType())
		}
		var body map[string]any
		if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
			t.Fatalf("patch %s: %v", p.GetPatch(), err)
		}
		out = append(out, body)
	}
	return out
}

// newSink is a sink for a containerd runtime.
func newSink(client *fake.Clientset) *Sink {
	return New(client, func(context.Context) (string, error) { return "containerd", nil })
}

func TestPutPatchesTheStatusFromWhatGetRead(t *testing.T) {
	ctx := t.Context()
	old := v1.PodStatus{Phase: v1.PodPending, Reason: "Waiting", Message: "for a while"}
	client := fake.NewClientset(apiPod("uid-1", old))
	s := newSink(client)
	if _, err := s.Get(ctx, "default", "web"); err != nil {
		t.Fatal(err)
	}
	next := v1.PodStatus{Phase: v1.PodRunning, PodIP: "10.0.0.1"}
	if err := s.Put(ctx, "default", "web", "uid-1", next); err != nil {
		t.Fatal(err)
	}
	ps := patches(t, client)
	if len(ps) != 1 {
		t.Fatalf("%d patches, want 1", len(ps))
	}
	meta, _ := ps[0]["metadata"].(map[string]any)
	if meta["uid"] != "uid-1" {
		t.Errorf("patch metadata %v; want the uid uid-1 as the precondition", meta)
	}
	status, _ := ps[0]["status"].(map[string]any)
	for k, want := range map[string]any{"phase": "Running", "podIP": "10.0.0.1", "reason": nil, "message": nil} {
		got, ok := status[k]
		if !ok || got != want {
			t.Errorf("patch status.%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	got, err := client.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1.PodRunning || got.Status.Reason != "" || got.Status.PodIP != "10.0.0.1" {
		t.Errorf("stored status %+v; want Running with the old reason gone", got.Status)
	}
}

func TestErrorsMapToTheLifecycleSentinels(t *testing.T) {
	uidInvalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "web",
		field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), "uid-1", "field is immutable")})
	uidConflict := apierrors.NewConflict(podsResource, "web",
		errors.New("Precondition failed: UID in precondition: uid-1, UID in object meta: uid-2"))
	tests := []struct {
		name   string
		verb   string
		err    error
		call   func(s *Sink) error
		want   error // nil: no error
		wantIs bool
	}{
		{"get of a missing pod", "get", apierrors.NewNotFound(podsResource, "web"),
			func(s *Sink) error { _, err := s.Get(t.Context(), "default", "web"); return err }, lifecycle.ErrNotFound, true},
		{"put to a pod recreated (invalid uid)", "patch", uidInvalid,
			func(s *Sink) error { return s.Put(t.Context(), "default", "web", "uid-1", v1.PodStatus{}) }, lifecycle.ErrUIDMismatch, true},
		{"put to a pod recreated (conflict)", "patch", uidConflict,
			func(s *Sink) error { return s.Put(t.Context(), "default", "web", "uid-1", v1.PodStatus{}) }, lifecycle.ErrUIDMismatch, true},
		{"put to a missing pod", "patch", apierrors.NewNotFound(podsResource, "web"),
			func(s *Sink) error { return s.Put(t.Context(), "default", "web", "uid-1", v1.PodStatus{}) }, lifecycle.ErrNotFound, true},
		{"put refused otherwise", "patch", apierrors.NewForbidden(podsResource, "web", errors.New("no")),
			func(s *Sink) error { return s.Put(t.Context(), "default", "web", "uid-1", v1.PodStatus{}) }, lifecycle.ErrUIDMismatch, false},
		{"delete of a pod already gone", "delete", apierrors.NewNotFound(podsResource, "web"),
			func(s *Sink) error { return s.Delete(t.Context(), "default", "web", "uid-1") }, nil, false},
		{"delete of a recreated pod", "delete", uidConflict,
			func(s *Sink) error { return s.Delete(t.Context(), "default", "web", "uid-1") }, lifecycle.ErrUIDMismatch, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			client.PrependReactor(tt.verb, "pods", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tt.err })
			err := tt.call(newSink(client))
			switch {
			case tt.want == nil && err != nil:
				t.Errorf("err %v, want nil", err)
			case tt.want != nil && err == nil:
				t.Errorf("no error, want one")
			case tt.want != nil && errors.Is(err, tt.want) != tt.wantIs:
				t.Errorf("errors.Is(%v, %v) = %v, want %v", err, tt.want, !tt.wantIs, tt.wantIs)
			}
		})
	}
}

func TestDeleteIsImmediateWithTheUIDPrecondition(t *testing.T) {
	client := fake.NewClientset(apiPod("uid-1", v1.PodStatus{}))
	if err := newSink(client).Delete(t.Context(), "default", "web", "uid-1"); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, a := range client.Actions() {
		d, ok := a.(k8stesting.DeleteAction)
		if !ok {
			continue
		}
		found = true
		o := d.GetDeleteOptions()
		if o.GracePeriodSeconds == nil || *o.GracePeriodSeconds != 0 {
			t.Errorf("delete grace %v, want 0", o.GracePeriodSeconds)
		}
		if o.Preconditions == nil || o.Preconditions.UID == nil || *o.Preconditions.UID != "uid-1" {
			t.Errorf("delete preconditions %+v, want uid uid-1", o.Preconditions)
		}
	}
	if !found {
		t.Error("no delete sent")
	}
}

func TestReject(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name                string
		pod                 *v1.Pod
		wantPatch, wantGone bool
	}{
		{"a new pod is failed", apiPod("uid-1", v1.PodStatus{Phase: v1.PodPending}), true, false},
		{"an already failed pod is left alone",
			apiPod("uid-1", v1.PodStatus{Phase: v1.PodFailed, Reason: "UnsupportedVolume", Message: "Pod was rejected: x"}), false, false},
		{"a pod marked for deletion is failed and deleted", func() *v1.Pod {
			p := apiPod("uid-1", v1.PodStatus{Phase: v1.PodPending})
			p.DeletionTimestamp = &now
			return p
		}(), true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(tt.pod.DeepCopy())
			if err := newSink(client).Reject(t.Context(), tt.pod, "UnsupportedVolume", "Pod was rejected: x"); err != nil {
				t.Fatal(err)
			}
			ps := patches(t, client)
			if got := len(ps) == 1; got != tt.wantPatch {
				t.Errorf("%d patches, want a patch: %v", len(ps), tt.wantPatch)
			}
			if tt.wantPatch {
				status, _ := ps[0]["status"].(map[string]any)
				if status["phase"] != "Failed" || status["reason"] != "UnsupportedVolume" || status["message"] != "Pod was rejected: x" {
					t.Errorf("patch status %v; want Failed with the reason and message", status)
				}
			}
			_, err := client.CoreV1().Pods("default").Get(t.Context(), "web", metav1.GetOptions{})
			if gone := apierrors.IsNotFound(err); gone != tt.wantGone {
				t.Errorf("pod gone %v (%v), want %v", gone, err, tt.wantGone)
			}
		})
	}
}

// TestContainerIDsCarryTheRuntimeTypeInTheAPI checks the two sides of the
// container IDs: the API server gets "containerd://ID", as from a kubelet,
// while the status manager reads and writes the runtime's IDs, so that a
// status read back equals the one it wrote and no patch follows.
func TestContainerIDsCarryTheRuntimeTypeInTheAPI(t *testing.T) {
	ctx := t.Context()
	running := func(id, last string) v1.PodStatus {
		return v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: "app", ContainerID: id,
			State:                v1.ContainerState{Running: &v1.ContainerStateRunning{}},
			LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ContainerID: last, ExitCode: 1}}}}}
	}
	client := fake.NewClientset(apiPod("uid-1", v1.PodStatus{Phase: v1.PodPending}))
	s := newSink(client)
	if _, err := s.Get(ctx, "default", "web"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "default", "web", "uid-1", running("abc", "old")); err != nil {
		t.Fatal(err)
	}
	stored, err := client.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := stored.Status.ContainerStatuses[0]; c.ContainerID != "containerd://abc" || c.LastTerminationState.Terminated.ContainerID != "containerd://old" {
		t.Errorf("API container IDs %q and %q; want containerd://abc and containerd://old", c.ContainerID, c.LastTerminationState.Terminated.ContainerID)
	}
	read, err := s.Get(ctx, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if c := read.Status.ContainerStatuses[0]; c.ContainerID != "abc" || c.LastTerminationState.Terminated.ContainerID != "old" {
		t.Errorf("Get gave container IDs %q and %q; want the runtime's abc and old", c.ContainerID, c.LastTerminationState.Terminated.ContainerID)
	}
	// Writing back what was read changes nothing in the API.
	client.ClearActions()
	if err := s.Put(ctx, "default", "web", "uid-1", read.Status); err != nil {
		t.Fatal(err)
	}
	if ps := patches(t, client); len(ps) != 1 || ps[0]["status"] != nil {
		t.Errorf("patches %v; want one with no status change", ps)
	}

	// Without the runtime's type nothing is written: IDs never show
	// both ways in the API.
	failing := New(client, func(context.Context) (string, error) { return "", errors.New("plugin down") })
	client.ClearActions()
	if err := failing.Put(ctx, "default", "web", "uid-1", running("def", "abc")); err == nil || len(patches(t, client)) != 0 {
		t.Errorf("Put without the runtime type: %v, %d patches; want an error and none", err, len(patches(t, client)))
	}
}

// TestReadCacheKeepsNothingBetweenSyncs runs the status manager over the
// sink and checks that the statuses Get read are not kept once the sync
// that read them is over: a sync that finds the API already holding the
// status reads and writes nothing, and the read was kept until a Put or
// Delete of that pod came, which for a pod gone from the node never
// comes (issue 24: an entry per pod, forever).
func TestReadCacheKeepsNothingBetweenSyncs(t *testing.T) {
	ctx := t.Context()
	const n = 100
	client := fake.NewClientset()
	s := newSink(client)
	status := v1.PodStatus{Phase: v1.PodRunning, StartTime: &metav1.Time{Time: time.Unix(1000, 0)}}
	var pods []*v1.Pod
	for i := range n {
		p := apiPod(types.UID(fmt.Sprint("uid-", i)), status)
		p.Name = fmt.Sprint("web-", i)
		if _, err := client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p)
	}
	// A status manager that starts with the statuses the API holds, as
	// after a restart of the host.
	m := lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: fixedClock{time.Unix(2000, 0)}, Sink: s})
	for _, p := range pods {
		m.SetPodStatus(p, status)
	}
	m.SyncBatch(ctx, false)
	if ps := patches(t, client); len(ps) != 0 {
		t.Fatalf("%d patches; the API held every status already", len(ps))
	}
	if got := s.readLen(); got != 0 {
		t.Errorf("the sink keeps %d reads after the sync; want 0", got)
	}
	m.RemoveOrphanedStatuses(nil) // the pods left the node
	m.SyncBatch(ctx, true)
	if got := s.readLen(); got != 0 {
		t.Errorf("the sink keeps %d reads of pods gone from the node; want 0", got)
	}
}

// fixedClock is a lifecycle.Clock that stands still.
type fixedClock struct{ now time.Time }

func (c fixedClock) Now() time.Time                       { return c.now }
func (c fixedClock) After(time.Duration) <-chan time.Time { return nil }

// readLen is how many reads the sink keeps.
func (s *Sink) readLen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.read)
}
