package runtimemanager

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/runtimemanager/runtimetestfake"
	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// env is a Manager over the fake runtime, served over real gRPC.
type env struct {
	t       *testing.T
	clock   *lifecycletest.FakeClock
	fake    *runtimetestfake.Fake
	client  runtimev1.RuntimeClient
	m       *Manager
	reasons *lifecycle.ReasonCache
	root    string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clock := lifecycletest.NewFakeClock(epoch)
	fake := runtimetestfake.New(clock.Now)
	e := &env{t: t, clock: clock, fake: fake, client: runtimetestfake.Dial(t, fake), root: t.TempDir(), reasons: lifecycle.NewReasonCache()}
	e.m = e.newManager()
	return e
}

// newManager returns a fresh Manager over the same runtime, as after a
// host restart.
func (e *env) newManager() *Manager {
	m, err := New(Options{Runtime: e.client, Clock: e.clock, LogRoot: e.root, Reasons: e.reasons, Plugin: "fake"})
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func (e *env) sync(pod *v1.Pod) error {
	e.t.Helper()
	return e.m.SyncPod(context.Background(), pod, nil)
}

func (e *env) mustSync(pod *v1.Pod) {
	e.t.Helper()
	if err := e.sync(pod); err != nil {
		e.t.Fatalf("SyncPod: %v", err)
	}
}

func (e *env) status(pod *v1.Pod) *lifecycle.PodStatus {
	e.t.Helper()
	st, err := e.m.PodStatus(context.Background(), pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		e.t.Fatalf("PodStatus: %v", err)
	}
	return st
}

// container returns the newest status of the named container; it fails
// the test when there is none.
func (e *env) container(pod *v1.Pod, name string) *lifecycle.ContainerStatus {
	e.t.Helper()
	c := e.status(pod).Container(name)
	if c == nil {
		e.t.Fatalf("no container %q in %+v", name, e.status(pod))
	}
	return c
}

// exit makes the newest container of the name exit with code.
func (e *env) exit(pod *v1.Pod, name string, code int32) {
	e.t.Helper()
	e.fake.ExitContainer(e.container(pod, name).ID, code)
}

func (e *env) count(method string) int { return e.fake.CallCount(method) }

func newPod(name string, containers ...string) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
	}
	for _, c := range containers {
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: c, Image: "busybox:1.36"})
	}
	return pod
}

func withInits(pod *v1.Pod, names ...string) *v1.Pod {
	for _, n := range names {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: n, Image: "busybox:1.36"})
	}
	return pod
}

func withPolicy(pod *v1.Pod, p v1.RestartPolicy) *v1.Pod {
	pod.Spec.RestartPolicy = p
	return pod
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func ptr[T any](v T) *T { return &v }
