package apisource

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podhost/podhost/sources"
	"github.com/podhost/podhost/sources/manifest"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newTestSource returns a loaded source with sequential UIDs uid-1, uid-2, …
func newTestSource(t *testing.T, p Persister) *Source {
	t.Helper()
	n := 0
	s := New(Options{
		Persister: p,
		NodeName:  "node1",
		NewUID:    func() types.UID { n++; return types.UID(fmt.Sprintf("uid-%d", n)) },
		Now:       func() time.Time { return t0 },
	})
	if err := s.Load(t.Context()); err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

func podYAML(name, image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  containers: [{name: app, image: %q}]
`, name, image)
}

func TestApply(t *testing.T) {
	type step struct {
		body    string
		wantOp  Op
		wantUID types.UID
		wantErr []string // each must be in the error, and each field path among the field errors
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"create then update keeps the uid, same content is unchanged", []step{
			{body: podYAML("web", "busybox:1"), wantOp: Created, wantUID: "uid-1"},
			{body: podYAML("web", "busybox:2"), wantOp: Updated, wantUID: "uid-1"},
			{body: podYAML("web", "busybox:2"), wantOp: Unchanged, wantUID: "uid-1"},
			{body: podYAML("db", "busybox:2"), wantOp: Created, wantUID: "uid-2"},
		}},
		{"json is accepted", []step{
			{body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"j"},"spec":{"containers":[{"name":"a","image":"x:1"}]}}`, wantOp: Created, wantUID: "uid-1"},
		}},
		{"a uid in the body is ignored", []step{
			{body: strings.Replace(podYAML("web", "x:1"), "namespace: default", "namespace: default, uid: mine", 1), wantOp: Created, wantUID: "uid-1"},
		}},
		{"every validation error names its field", []step{
			{body: `apiVersion: v1
kind: Pod
metadata: {name: Bad_Name}
spec:
  restartPolicy: Sometimes
  containers: [{name: app}]
`, wantErr: []string{"metadata.name", "spec.restartPolicy", "spec.containers[0].image"}},
		}},
		{"an unknown field is named", []step{
			{body: strings.Replace(podYAML("web", "x:1"), "image:", "imagee:", 1), wantErr: []string{"spec.containers[0].imagee"}},
		}},
		{"only pods are accepted", []step{
			{body: "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {resources: {requests: {storage: 1Gi}}, accessModes: [ReadWriteOnce]}\n", wantErr: []string{"kind"}},
			{body: "apiVersion: v1\nkind: Service\nmetadata: {name: c}\n", wantErr: []string{"kind"}},
		}},
		{"one pod per request", []step{
			{body: podYAML("a", "x:1") + "---\n" + podYAML("b", "x:1"), wantErr: []string{"body"}},
		}},
		{"an empty body is refused", []step{
			{body: "", wantErr: []string{"body"}},
		}},
		{"a bad update leaves the pod as it was", []step{
			{body: podYAML("web", "x:1"), wantOp: Created, wantUID: "uid-1"},
			{body: podYAML("web", ""), wantErr: []string{"spec.containers[0].image"}},
			{body: podYAML("web", "x:1"), wantOp: Unchanged, wantUID: "uid-1"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSource(t, &MemoryPersister{})
			for i, st := range tt.steps {
				pod, op, err := s.Apply(t.Context(), "request", []byte(st.body))
				if len(st.wantErr) > 0 {
					if !errors.Is(err, ErrInvalid) {
						t.Fatalf("step %d: err = %v; want ErrInvalid", i, err)
					}
					fields := fieldPaths(err)
					for _, w := range st.wantErr {
						if !strings.Contains(err.Error(), w) || !fields[w] {
							t.Errorf("step %d: error %q (fields %v) does not name %q", i, err, fields, w)
						}
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d: Apply: %v", i, err)
				}
				if op != st.wantOp || pod.UID != st.wantUID {
					t.Errorf("step %d: op %s uid %s; want %s %s", i, op, pod.UID, st.wantOp, st.wantUID)
				}
				if pod.Annotations[manifest.AnnotationSource] != sources.SourceAPI || pod.Spec.NodeName != "node1" || pod.Namespace != "default" {
					t.Errorf("step %d: pod not defaulted as an api pod: %+v %+v", i, pod.ObjectMeta, pod.Spec.NodeName)
				}
			}
		})
	}
}

// fieldPaths collects the paths of the *field.Error values in err's tree.
func fieldPaths(err error) map[string]bool {
	out := map[string]bool{}
	var walk func(error)
	walk = func(err error) {
		var fe *field.Error
		if e, ok := err.(*field.Error); ok {
			fe = e
			out[fe.Field] = true
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			if e := u.Unwrap(); e != nil {
				walk(e)
			}
		}
	}
	walk(err)
	return out
}

func ptr(n int64) *int64 { return &n }

func TestDelete(t *testing.T) {
	tests := []struct {
		name             string
		terminationGrace string // spec field in the applied body, "" for the default
		deletes          []DeleteOptions
		wantGrace        int64
		wantGone         bool
		wantErr          error
	}{
		{name: "default grace is the pod's", terminationGrace: "7", deletes: []DeleteOptions{{}}, wantGrace: 7},
		{name: "default grace of a pod without one is 30", deletes: []DeleteOptions{{}}, wantGrace: 30},
		{name: "explicit grace", deletes: []DeleteOptions{{GracePeriod: ptr(3)}}, wantGrace: 3},
		{name: "grace 0 without force is 1", deletes: []DeleteOptions{{GracePeriod: ptr(0)}}, wantGrace: 1},
		{name: "a second delete shortens the grace", deletes: []DeleteOptions{{GracePeriod: ptr(20)}, {GracePeriod: ptr(5)}}, wantGrace: 5},
		{name: "a second delete never lengthens it", deletes: []DeleteOptions{{GracePeriod: ptr(5)}, {GracePeriod: ptr(20)}}, wantGrace: 5},
		{name: "force removes at once with grace 0", deletes: []DeleteOptions{{Force: true, GracePeriod: ptr(9)}}, wantGrace: 0, wantGone: true},
		{name: "force after a graceful delete", deletes: []DeleteOptions{{}, {Force: true}}, wantGrace: 0, wantGone: true},
		{name: "negative grace is invalid", deletes: []DeleteOptions{{GracePeriod: ptr(-1)}}, wantErr: ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSource(t, &MemoryPersister{})
			body := podYAML("web", "x:1")
			if tt.terminationGrace != "" {
				body += "  terminationGracePeriodSeconds: " + tt.terminationGrace + "\n"
			}
			if _, _, err := s.Apply(t.Context(), "request", []byte(body)); err != nil {
				t.Fatal(err)
			}
			var pod *v1.Pod
			var err error
			for _, o := range tt.deletes {
				pod, err = s.Delete(t.Context(), "default", "web", o)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Delete: err = %v; want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Delete: %v", err)
			}
			if pod.DeletionTimestamp == nil || !pod.DeletionTimestamp.Time.Equal(t0) {
				t.Errorf("deletionTimestamp = %v; want %v", pod.DeletionTimestamp, t0)
			}
			if g := pod.DeletionGracePeriodSeconds; g == nil || *g != tt.wantGrace {
				t.Errorf("deletionGracePeriodSeconds = %v; want %d", g, tt.wantGrace)
			}
			snap := <-s.Updates()
			if gone := len(snap.Pods) == 0; gone != tt.wantGone {
				t.Errorf("pod gone from the snapshot = %v; want %v", gone, tt.wantGone)
			}
			if !tt.wantGone && snap.Pods[0].Pod.DeletionTimestamp == nil {
				t.Error("snapshot pod is not marked for deletion")
			}
		})
	}
}

func TestDeleteThenApplyAndRemove(t *testing.T) {
	s := newTestSource(t, &MemoryPersister{})
	ctx := t.Context()
	if _, err := s.Delete(ctx, "default", "nope", DeleteOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete of an unknown pod: err = %v; want ErrNotFound", err)
	}
	if _, _, err := s.Apply(ctx, "request", []byte(podYAML("web", "x:1"))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, "default", "web", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Apply(ctx, "request", []byte(podYAML("web", "x:2"))); !errors.Is(err, ErrTerminating) {
		t.Errorf("Apply while terminating: err = %v; want ErrTerminating", err)
	}
	if err := s.Remove(ctx, "default", "web", "other-uid"); !errors.Is(err, ErrUIDMismatch) {
		t.Errorf("Remove with another uid: err = %v; want ErrUIDMismatch", err)
	}
	if err := s.Remove(ctx, "default", "web", "uid-1"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, ok := s.Get("default", "web"); ok {
		t.Error("pod still held after Remove")
	}
	if err := s.Remove(ctx, "default", "web", "uid-1"); err != nil {
		t.Errorf("Remove of a removed pod: %v; want nil", err)
	}
	pod, op, err := s.Apply(ctx, "request", []byte(podYAML("web", "x:2")))
	if err != nil || op != Created || pod.UID != "uid-2" {
		t.Errorf("re-create: op %s uid %v err %v; want created with a new uid", op, pod, err)
	}
}

func TestPersistence(t *testing.T) {
	ctx := t.Context()
	p := &MemoryPersister{}
	s := newTestSource(t, p)
	if _, _, err := s.Apply(ctx, "request", []byte(podYAML("web", "x:1"))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, "default", "web", DeleteOptions{GracePeriod: ptr(4)}); err != nil {
		t.Fatal(err)
	}

	t.Run("a failed save changes nothing", func(t *testing.T) {
		p.SetSaveErr(errors.New("disk full"))
		defer p.SetSaveErr(nil)
		if _, _, err := s.Apply(ctx, "request", []byte(podYAML("db", "x:1"))); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("Apply with a failing persister: err = %v; want disk full", err)
		}
		if _, ok := s.Get("default", "db"); ok {
			t.Error("pod held although it was not saved")
		}
	})

	t.Run("a new source loads what was saved", func(t *testing.T) {
		s2 := New(Options{Persister: p})
		select {
		case <-s2.Synced():
			t.Fatal("synced before Load")
		default:
		}
		if _, _, err := s2.Apply(ctx, "request", []byte(podYAML("x", "x:1"))); !errors.Is(err, ErrNotLoaded) {
			t.Errorf("Apply before Load: err = %v; want ErrNotLoaded", err)
		}
		if err := s2.Load(ctx); err != nil {
			t.Fatal(err)
		}
		<-s2.Synced()
		snap := <-s2.Updates()
		if len(snap.Pods) != 1 {
			t.Fatalf("loaded snapshot has %d pods; want 1", len(snap.Pods))
		}
		got := snap.Pods[0]
		if got.Pod.UID != "uid-1" || got.Pod.DeletionGracePeriodSeconds == nil || *got.Pod.DeletionGracePeriodSeconds != 4 {
			t.Errorf("loaded pod = %s grace %v; want uid-1 marked with grace 4", got.Pod.UID, got.Pod.DeletionGracePeriodSeconds)
		}
		if got.Origin != (sources.Origin{Source: sources.SourceAPI, Key: "default/web", Where: "api pod default/web"}) {
			t.Errorf("origin = %+v", got.Origin)
		}
	})
}

func TestSnapshotsAreNewestOnlyAndCarryRequestErrors(t *testing.T) {
	ctx := t.Context()
	s := newTestSource(t, &MemoryPersister{})
	for _, body := range []string{podYAML("a", "x:1"), podYAML("b", "x:1"), podYAML("b", "")} {
		s.Apply(ctx, "request", []byte(body))
	}
	snap := <-s.Updates()
	select {
	case extra := <-s.Updates():
		t.Fatalf("a second, older snapshot was queued: %+v", extra)
	default:
	}
	if len(snap.Pods) != 2 || len(snap.Errors) != 1 {
		t.Fatalf("snapshot: %d pods, errors %v; want 2 pods and the failed request", len(snap.Pods), snap.Errors)
	}
	var inv *InvalidError
	if !errors.As(snap.Errors[0], &inv) || inv.Name != "b" || !strings.Contains(inv.Error(), "spec.containers[0].image") {
		t.Errorf("snapshot error = %v; want the failed request for default/b naming the field", snap.Errors[0])
	}
	// A successful apply of the same name clears the error.
	if _, _, err := s.Apply(ctx, "request", []byte(podYAML("b", "x:2"))); err != nil {
		t.Fatal(err)
	}
	if snap := <-s.Updates(); len(snap.Errors) != 0 {
		t.Errorf("errors after a good apply: %v; want none", snap.Errors)
	}
}

func TestRequestErrorsAreBounded(t *testing.T) {
	s := newTestSource(t, &MemoryPersister{})
	for i := range maxRequestErrors + 10 {
		s.Apply(t.Context(), "request", []byte(podYAML(fmt.Sprintf("p%d", i), "")))
	}
	if snap := <-s.Updates(); len(snap.Errors) != maxRequestErrors {
		t.Errorf("remembered %d failed requests; want %d", len(snap.Errors), maxRequestErrors)
	}
}

func TestStatusAndDeletionInTheBodyAreIgnored(t *testing.T) {
	s := newTestSource(t, &MemoryPersister{})
	now := metav1.NewTime(t0)
	p := &v1.Pod{}
	_ = p
	body := podYAML("web", "x:1") + "status: {phase: Running}\n"
	body = strings.Replace(body, "namespace: default", fmt.Sprintf("namespace: default, deletionTimestamp: %q", now.Format(time.RFC3339)), 1)
	pod, _, err := s.Apply(context.Background(), "request", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != "" || pod.DeletionTimestamp != nil {
		t.Errorf("pod kept status %q / deletionTimestamp %v from the body", pod.Status.Phase, pod.DeletionTimestamp)
	}
}

func TestRandomUID(t *testing.T) {
	a, b := randomUID(), randomUID()
	if a == b || len(a) != 36 || a[14] != '4' {
		t.Errorf("randomUID gave %q and %q; want two distinct v4 UUIDs", a, b)
	}
}
