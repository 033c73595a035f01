package lifecycle_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
	"github.com/podhost/podhost/lifecycle/lifecycletest"
)

// fakePodState answers the status manager's questions about the worker.
type fakePodState struct {
	running     map[types.UID]bool
	terminating map[types.UID]bool
}

func (f *fakePodState) CouldHaveRunningContainers(uid types.UID) bool { return f.running[uid] }
func (f *fakePodState) IsPodTerminationRequested(uid types.UID) bool  { return f.terminating[uid] }

// fakeLookup resolves static pods to mirrors.
type fakeLookup struct {
	pods    map[types.UID]*v1.Pod
	mirrors map[types.UID]*v1.Pod // static UID -> mirror
}

func (l *fakeLookup) Pod(uid types.UID) (*v1.Pod, bool) { p, ok := l.pods[uid]; return p, ok }
func (l *fakeLookup) MirrorPod(static *v1.Pod) (*v1.Pod, bool) {
	m, ok := l.mirrors[static.UID]
	return m, ok
}
func (l *fakeLookup) StaticPodUID(mirror types.UID) (types.UID, bool) {
	for s, m := range l.mirrors {
		if m.UID == mirror {
			return s, true
		}
	}
	return "", false
}

type statusEnv struct {
	clock  *lifecycletest.FakeClock
	sink   *lifecycletest.RecordingSink
	state  *fakePodState
	lookup *fakeLookup
	m      *lifecycle.StatusManager
}

func newStatusEnv() *statusEnv {
	e := &statusEnv{
		clock:  lifecycletest.NewFakeClock(time.Unix(1000, 0)),
		sink:   lifecycletest.NewRecordingSink(),
		state:  &fakePodState{running: map[types.UID]bool{}, terminating: map[types.UID]bool{}},
		lookup: &fakeLookup{pods: map[types.UID]*v1.Pod{}, mirrors: map[types.UID]*v1.Pod{}},
	}
	e.m = lifecycle.NewStatusManager(lifecycle.StatusManagerConfig{Clock: e.clock, Sink: e.sink, Pods: e.state, Lookup: e.lookup})
	return e
}

func apiPod(uid, name string) *v1.Pod {
	p := &v1.Pod{}
	p.UID, p.Name, p.Namespace = types.UID(uid), name, "ns"
	p.Spec.RestartPolicy = v1.RestartPolicyAlways
	p.Spec.Containers = []v1.Container{{Name: "c1"}, {Name: "c2"}}
	return p
}

func running(name, id string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, ContainerID: id, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
}

func waiting(name string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
}

func terminated(name string, code int32) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}}
}

func wantCalls(t *testing.T, sink *lifecycletest.RecordingSink, want ...string) {
	t.Helper()
	if got := sink.Calls(); !slices.Equal(got, want) {
		t.Errorf("sink calls %q; want %q", got, want)
	}
}

func TestStatusNewAndStartTime(t *testing.T) {
	t.Run("F55 new status gives one version and a start time", func(t *testing.T) {
		e := newStatusEnv()
		pod := apiPod("1", "p")
		e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodPending})
		st, ok := e.m.PodStatus("1")
		if !ok || e.m.Version("1") != 1 || st.StartTime == nil || !st.StartTime.Time.Equal(time.Unix(1000, 0)) {
			t.Fatalf("status %+v version %d; want version 1 with StartTime", st, e.m.Version("1"))
		}
	})
	t.Run("F55 an existing start time is preserved", func(t *testing.T) {
		e := newStatusEnv()
		pod := apiPod("1", "p")
		old := metav1.NewTime(time.Unix(500, 0))
		pod.Status.StartTime = &old
		e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodPending})
		if st, _ := e.m.PodStatus("1"); !st.StartTime.Time.Equal(old.Time) {
			t.Errorf("StartTime %v; want %v", st.StartTime, old)
		}
	})
}

func TestStatusDeduplication(t *testing.T) {
	t.Run("F56 an unchanged status is not a new version", func(t *testing.T) {
		e := newStatusEnv()
		pod := apiPod("1", "p")
		ready := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}}
		e.m.SetPodStatus(pod, ready)
		e.m.SetPodStatus(pod, ready)
		if v := e.m.Version("1"); v != 1 {
			t.Errorf("F56 same status twice: version %d; want 1", v)
		}
		st1, _ := e.m.PodStatus("1")
		e.clock.Step(5 * time.Second)
		msg := *ready.DeepCopy()
		msg.Message = "other"
		e.m.SetPodStatus(pod, msg)
		if v := e.m.Version("1"); v != 2 {
			t.Errorf("F56 different message: version %d; want 2", v)
		}
		st2, _ := e.m.PodStatus("1")
		if !st2.Conditions[0].LastTransitionTime.Equal(&st1.Conditions[0].LastTransitionTime) {
			t.Errorf("F56 unchanged Ready kept no transition time: %v vs %v", st2.Conditions[0].LastTransitionTime, st1.Conditions[0].LastTransitionTime)
		}
		e.clock.Step(5 * time.Second)
		notReady := *msg.DeepCopy()
		notReady.Conditions[0].Status = v1.ConditionFalse
		e.m.SetPodStatus(pod, notReady)
		st3, _ := e.m.PodStatus("1")
		if !st3.Conditions[0].LastTransitionTime.After(st2.Conditions[0].LastTransitionTime.Time) {
			t.Errorf("F56 changed Ready: transition %v not after %v", st3.Conditions[0].LastTransitionTime, st2.Conditions[0].LastTransitionTime)
		}
	})
}

func TestStatusSyncPath(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		stored    *v1.Pod
		getErr    error
		want      []string
		wantLocal bool
	}{
		{name: "F57 found: get then put", stored: apiPod("1", "p"), want: []string{"get ns/p", "put ns/p"}, wantLocal: true},
		{name: "F57 not found: get only, status kept", want: []string{"get ns/p"}, wantLocal: true},
		{name: "F57 uid mismatch: get only, status dropped", stored: apiPod("other", "p"), want: []string{"get ns/p"}, wantLocal: false},
		{name: "F57 other error: get only, retried later", getErr: errors.New("boom"), want: []string{"get ns/p"}, wantLocal: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newStatusEnv()
			if tt.stored != nil {
				e.sink.Store(tt.stored)
			}
			e.sink.GetErr = tt.getErr
			e.m.SetPodStatus(apiPod("1", "p"), v1.PodStatus{Phase: v1.PodRunning})
			e.m.SyncBatch(ctx, false)
			wantCalls(t, e.sink, tt.want...)
			if _, ok := e.m.PodStatus("1"); ok != tt.wantLocal {
				t.Errorf("local status kept %t; want %t", ok, tt.wantLocal)
			}
		})
	}
}

func TestStatusStaleVersions(t *testing.T) {
	t.Run("F58 a batch writes the newest version once", func(t *testing.T) {
		// F58: three sets, one full batch: one get+put with the newest version.
		ctx := context.Background()
		e := newStatusEnv()
		pod := apiPod("1", "p")
		e.sink.Store(pod)
		for _, msg := range []string{"a", "b", "c"} {
			e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, Message: msg})
		}
		e.m.SyncBatch(ctx, true)
		wantCalls(t, e.sink, "get ns/p", "put ns/p")
		if p, _ := e.sink.Pod("ns", "p"); p.Status.Message != "c" {
			t.Errorf("F58 sink message %q; want c", p.Status.Message)
		}
		e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, Message: "c"})
		if v := e.m.Version("1"); v != 3 {
			t.Errorf("F58 unchanged status bumped the version to %d", v)
		}
		e.m.SyncBatch(ctx, true)
		wantCalls(t, e.sink)
		// F58: lowering the recorded API version by one makes the pod look
		// newer than the sink: the next full batch re-syncs it, but the sink
		// already holds that status, so only the GET is issued.
		e.m.SetAPIVersionForTest("1", e.m.Version("1")-1)
		e.m.SyncBatch(ctx, true)
		wantCalls(t, e.sink, "get ns/p")
		if got, want := e.m.APIVersionForTest("1"), e.m.Version("1"); got != want {
			t.Errorf("F58 recorded API version %d after the re-sync; want %d", got, want)
		}
		e.m.SyncBatch(ctx, true)
		wantCalls(t, e.sink)
		select {
		case <-e.m.Doorbell():
			t.Errorf("F58 doorbell still rung after the batch")
		default:
		}
	})
}

func TestStatusStaticPods(t *testing.T) {
	t.Run("F59 a static pod status is written against its mirror", func(t *testing.T) {
		ctx := context.Background()
		e := newStatusEnv()
		static := apiPod("s", "web")
		static.Annotations = map[string]string{lifecycle.ConfigSourceAnnotation: "file"}
		e.m.SetPodStatus(static, v1.PodStatus{Phase: v1.PodRunning})
		e.m.SyncBatch(ctx, true)
		wantCalls(t, e.sink) // F59: no sync without a mirror
		mirror := apiPod("m", "web")
		mirror.Annotations = map[string]string{lifecycle.ConfigMirrorAnnotation: "x"}
		e.lookup.mirrors["s"] = mirror
		e.sink.Store(mirror)
		e.m.SyncBatch(ctx, true)
		wantCalls(t, e.sink, "get ns/web", "put ns/web") // F59: written against the mirror
		if _, ok := e.m.PodStatus("m"); !ok {
			t.Errorf("F59 status not found by mirror UID")
		}
		e.lookup.mirrors["s"] = apiPod("m2", "web")
		e.m.SetPodStatus(static, v1.PodStatus{Phase: v1.PodRunning, Message: "new"})
		e.m.SyncBatch(ctx, false)
		wantCalls(t, e.sink, "get ns/web") // F59: mirror UID changed: get only
	})
}

func TestTerminatePodDefaults(t *testing.T) {
	lost := func(name string) v1.ContainerStatus {
		return v1.ContainerStatus{Name: name, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			Reason: "ContainerStatusUnknown", Message: "The container could not be located when the pod was terminated", ExitCode: 137}}}
	}
	waitingWithLast := func(name string, code int32) v1.ContainerStatus {
		c := waiting(name)
		c.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: code}
		return c
	}
	tests := []struct {
		name               string
		init, regular      []v1.ContainerStatus
		wantInit, wantRegs []v1.ContainerStatus
		phase, wantPhase   v1.PodPhase
		static             bool
	}{
		{name: "F60 every non-terminated regular container gets 137",
			regular: []v1.ContainerStatus{running("c1", "1"), terminated("c2", 0)}, wantRegs: []v1.ContainerStatus{lost("c1"), terminated("c2", 0)},
			phase: v1.PodRunning, wantPhase: v1.PodFailed},
		{name: "F60 uninitialized pod: init gets 137, container stays waiting",
			init: []v1.ContainerStatus{waiting("i1")}, regular: []v1.ContainerStatus{waiting("c1")},
			wantInit: []v1.ContainerStatus{lost("i1")}, wantRegs: []v1.ContainerStatus{waiting("c1")}, phase: v1.PodPending, wantPhase: v1.PodFailed},
		{name: "F60 init [W W T(1) W]: first two get 137, the trailing waiter stays",
			init:     []v1.ContainerStatus{waiting("i1"), waiting("i2"), terminated("i3", 1), waiting("i4")},
			regular:  []v1.ContainerStatus{waiting("c1")},
			wantInit: []v1.ContainerStatus{lost("i1"), lost("i2"), terminated("i3", 1), waiting("i4")},
			wantRegs: []v1.ContainerStatus{waiting("c1")}, phase: v1.PodPending, wantPhase: v1.PodFailed},
		{name: "F60 last init succeeded: regular containers get 137",
			init: []v1.ContainerStatus{terminated("i1", 0)}, regular: []v1.ContainerStatus{waiting("c1")},
			wantInit: []v1.ContainerStatus{terminated("i1", 0)}, wantRegs: []v1.ContainerStatus{lost("c1")}, phase: v1.PodPending, wantPhase: v1.PodFailed},
		{name: "F60 last init waiting with last exit 0 counts as initialized and gets 137",
			init: []v1.ContainerStatus{waitingWithLast("i1", 0)}, regular: []v1.ContainerStatus{waiting("c1")},
			wantInit: []v1.ContainerStatus{func() v1.ContainerStatus {
				c := lost("i1")
				c.LastTerminationState = waitingWithLast("i1", 0).LastTerminationState
				return c
			}()},
			wantRegs: []v1.ContainerStatus{lost("c1")}, phase: v1.PodPending, wantPhase: v1.PodFailed},
		{name: "F61 Succeeded stays Succeeded", regular: []v1.ContainerStatus{terminated("c1", 0)},
			wantRegs: []v1.ContainerStatus{terminated("c1", 0)}, phase: v1.PodSucceeded, wantPhase: v1.PodSucceeded},
		{name: "F61 Failed stays Failed", regular: []v1.ContainerStatus{terminated("c1", 1)},
			wantRegs: []v1.ContainerStatus{terminated("c1", 1)}, phase: v1.PodFailed, wantPhase: v1.PodFailed},
		{name: "F61 Unknown becomes Failed", phase: v1.PodUnknown, wantPhase: v1.PodFailed},
		{name: "F61 unrecognised phase becomes Failed", phase: "Weird", wantPhase: v1.PodFailed},
		{name: "F61 static pods are not forced terminal", static: true, phase: v1.PodRunning, wantPhase: v1.PodRunning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newStatusEnv()
			pod := apiPod("1", "p")
			pod.Spec.Containers = nil
			for _, c := range tt.regular {
				pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: c.Name})
			}
			for _, c := range tt.init {
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: c.Name})
			}
			if tt.static {
				pod.Annotations = map[string]string{lifecycle.ConfigSourceAnnotation: "file"}
			}
			e.m.SetPodStatus(pod, v1.PodStatus{Phase: tt.phase, InitContainerStatuses: tt.init, ContainerStatuses: tt.regular, Message: "kept"})
			before := e.m.Version("1")
			e.m.TerminatePod(pod)
			if e.m.Version("1") != before+1 {
				t.Errorf("F61 TerminatePod is not forced: version %d after %d", e.m.Version("1"), before)
			}
			st, _ := e.m.PodStatus("1")
			if st.Phase != tt.wantPhase {
				t.Errorf("phase %q; want %q", st.Phase, tt.wantPhase)
			}
			if st.Message != "kept" {
				t.Errorf("message %q; want it kept", st.Message)
			}
			for _, pair := range []struct{ got, want []v1.ContainerStatus }{{st.InitContainerStatuses, tt.wantInit}, {st.ContainerStatuses, tt.wantRegs}} {
				if len(pair.got) != len(pair.want) {
					t.Fatalf("got %d statuses; want %d", len(pair.got), len(pair.want))
				}
				for i := range pair.got {
					g, w := pair.got[i].State, pair.want[i].State
					if (g.Terminated == nil) != (w.Terminated == nil) || (g.Terminated != nil && (g.Terminated.ExitCode != w.Terminated.ExitCode || g.Terminated.Reason != w.Terminated.Reason)) {
						t.Errorf("container %s state %+v; want %+v", pair.got[i].Name, g, w)
					}
				}
			}
		})
	}
}

func TestStatusDeletionGating(t *testing.T) {
	ctx := context.Background()
	deleting := func() *v1.Pod {
		p := apiPod("1", "p")
		ts := metav1.NewTime(time.Unix(900, 0))
		p.DeletionTimestamp = &ts
		return p
	}
	t.Run("F62 terminal status alone does not delete", func(t *testing.T) {
		e := newStatusEnv()
		e.sink.Store(deleting())
		e.m.SetPodStatus(deleting(), v1.PodStatus{Phase: v1.PodFailed})
		e.m.SyncBatch(ctx, true)
		wantCalls(t, e.sink, "get ns/p", "put ns/p")
	})
	t.Run("F62 after TerminatePod the pod is deleted with its uid", func(t *testing.T) {
		e := newStatusEnv()
		e.sink.Store(deleting())
		e.m.SetPodStatus(deleting(), v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{terminated("c1", 0), terminated("c2", 0)}})
		e.m.TerminatePod(deleting())
		e.m.SyncBatch(ctx, false)
		wantCalls(t, e.sink, "get ns/p", "put ns/p", "delete ns/p")
		if _, ok := e.sink.Pod("ns", "p"); ok {
			t.Errorf("pod still in the sink")
		}
	})
	t.Run("F62 a mirror pod is never deleted", func(t *testing.T) {
		e := newStatusEnv()
		static := deleting()
		static.Annotations = map[string]string{lifecycle.ConfigSourceAnnotation: "file"}
		mirror := deleting()
		mirror.UID = "m"
		mirror.Annotations = map[string]string{lifecycle.ConfigMirrorAnnotation: "x"}
		e.lookup.mirrors["1"] = mirror
		e.sink.Store(mirror)
		e.m.SetPodStatus(static, v1.PodStatus{Phase: v1.PodSucceeded})
		e.m.TerminatePod(static)
		e.m.SyncBatch(ctx, true)
		for _, c := range e.sink.Calls() {
			if strings.HasPrefix(c, "delete") {
				t.Errorf("mirror pod deleted: %s", c)
			}
		}
	})
}

func TestContainerReadiness(t *testing.T) {
	t.Run("F63 container readiness changes the status only when it changes", func(t *testing.T) {
		e := newStatusEnv()
		pod := apiPod("1", "p")
		e.m.SetContainerReadiness("1", "id1", true)
		if _, ok := e.m.PodStatus("1"); ok {
			t.Fatalf("F63 readiness before any status created one")
		}
		e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("c1", "id1"), running("c2", "id2")}})
		v := e.m.Version("1")
		e.m.SetContainerReadiness("1", "id1", false)
		if e.m.Version("1") != v {
			t.Errorf("F63 unchanged readiness bumped the version")
		}
		podReady := func() v1.ConditionStatus {
			st, _ := e.m.PodStatus("1")
			for _, c := range st.Conditions {
				if c.Type == v1.PodReady {
					return c.Status
				}
			}
			return ""
		}
		e.m.SetContainerReadiness("1", "id1", true)
		if e.m.Version("1") != v+1 || podReady() != v1.ConditionFalse {
			t.Errorf("F63 c1 ready: version %d, Ready %q; want %d, False", e.m.Version("1"), podReady(), v+1)
		}
		e.m.SetContainerReadiness("1", "id2", true)
		if podReady() != v1.ConditionTrue {
			t.Errorf("F63 both ready: Ready %q; want True", podReady())
		}
		v = e.m.Version("1")
		e.m.SetContainerReadiness("1", "nope", false)
		if e.m.Version("1") != v {
			t.Errorf("F63 unknown container changed the status")
		}
		e.m.SetContainerStartup("1", "id1", false)
		if e.m.Version("1") != v+1 {
			t.Errorf("F63 first startup report (nil to false) is not a change")
		}
	})
}

func TestStatusVersionGCAndReconcile(t *testing.T) {
	t.Run("F64 versions are collected and stale sinks reconciled", func(t *testing.T) {
		ctx := context.Background()
		e := newStatusEnv()
		pod := apiPod("1", "p")
		e.sink.Store(pod)
		e.lookup.pods["1"] = pod
		e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning})
		e.m.SyncBatch(ctx, true)
		e.sink.Calls()
		// F64: the pod manager's view still shows the old status: reconcile.
		e.m.SyncBatch(ctx, true)
		wantCalls(t, e.sink, "get ns/p")
		synced, _ := e.sink.Pod("ns", "p")
		withNanos := synced.DeepCopy()
		withNanos.Status.StartTime = &metav1.Time{Time: synced.Status.StartTime.Add(300 * time.Millisecond)}
		e.lookup.pods["1"] = withNanos
		e.m.SyncBatch(ctx, true)
		wantCalls(t, e.sink) // F64: differs only by timestamp precision: nothing
		// F64: a full batch forgets versions without a local status.
		e.m.RemoveOrphanedStatuses(nil)
		e.m.SyncBatch(ctx, true)
		wantCalls(t, e.sink)
	})
}

func TestMergePodStatus(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name          string
		api           v1.PodStatus
		local         v1.PodStatus
		couldRun      bool
		wantPhase     v1.PodPhase
		wantCondition map[v1.PodConditionType]v1.ConditionStatus
		// wantReason, when set, is the reason of Ready and ContainersReady.
		wantReason string
	}{
		{name: "F65 conditions not owned by the agent are preserved",
			api:   v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: "example.com/gate", Status: v1.ConditionTrue}}},
			local: v1.PodStatus{Phase: v1.PodRunning}, wantPhase: v1.PodRunning,
			wantCondition: map[v1.PodConditionType]v1.ConditionStatus{"example.com/gate": v1.ConditionTrue}},
		{name: "F65 terminal transition delayed while containers could run",
			api:   v1.PodStatus{Phase: v1.PodRunning},
			local: v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue}}}, couldRun: true,
			wantPhase: v1.PodRunning, wantCondition: map[v1.PodConditionType]v1.ConditionStatus{v1.DisruptionTarget: ""}},
		{name: "F65 DisruptionTarget added on terminal transition with nothing running",
			api:       v1.PodStatus{Phase: v1.PodRunning},
			local:     v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue}, {Type: v1.PodReady, Status: v1.ConditionTrue}}},
			wantPhase: v1.PodFailed, wantCondition: map[v1.PodConditionType]v1.ConditionStatus{v1.DisruptionTarget: v1.ConditionTrue, v1.PodReady: v1.ConditionFalse},
			wantReason: "PodFailed"},
		{name: "F65 a succeeded pod is not ready: PodCompleted",
			api: v1.PodStatus{Phase: v1.PodRunning},
			local: v1.PodStatus{Phase: v1.PodSucceeded, Conditions: []v1.PodCondition{
				{Type: v1.PodReady, Status: v1.ConditionTrue}, {Type: v1.ContainersReady, Status: v1.ConditionTrue}}},
			wantPhase: v1.PodSucceeded, wantCondition: map[v1.PodConditionType]v1.ConditionStatus{v1.PodReady: v1.ConditionFalse, v1.ContainersReady: v1.ConditionFalse},
			wantReason: "PodCompleted"},
		{name: "G68 a terminal API phase never changes",
			api: v1.PodStatus{Phase: v1.PodFailed}, local: v1.PodStatus{Phase: v1.PodSucceeded}, wantPhase: v1.PodFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newStatusEnv()
			pod := apiPod("1", "p")
			pod.Status = tt.api
			e.sink.Store(pod)
			e.state.running["1"] = tt.couldRun
			fresh := apiPod("1", "p")
			e.m.SetPodStatus(fresh, tt.local)
			e.m.SyncBatch(ctx, false)
			got, _ := e.sink.Pod("ns", "p")
			if got.Status.Phase != tt.wantPhase {
				t.Errorf("phase %q; want %q", got.Status.Phase, tt.wantPhase)
			}
			for ct, want := range tt.wantCondition {
				var have v1.ConditionStatus
				for _, c := range got.Status.Conditions {
					if c.Type == ct {
						have = c.Status
					}
				}
				if have != want {
					t.Errorf("condition %s = %q; want %q", ct, have, want)
				}
			}
			for _, c := range got.Status.Conditions {
				if tt.wantReason != "" && (c.Type == v1.PodReady || c.Type == v1.ContainersReady) && c.Reason != tt.wantReason {
					t.Errorf("condition %s reason %q; want %q", c.Type, c.Reason, tt.wantReason)
				}
			}
		})
	}
}

func TestStatusNormalisation(t *testing.T) {
	t.Run("F66 statuses are normalised before they are compared", func(t *testing.T) {
		e := newStatusEnv()
		pod := apiPod("1", "p")
		pod.Spec.Containers = nil
		var statuses []v1.ContainerStatus
		for i := range 48 {
			name := string(rune('a'+i%26)) + string(rune('a'+i/26))
			pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: name})
			c := terminated(name, 1)
			c.State.Terminated.Message = strings.Repeat("x", 1000)
			c.State.Terminated.FinishedAt = metav1.NewTime(time.Unix(1000, 123456789))
			statuses = append([]v1.ContainerStatus{c}, statuses...)
		}
		e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodFailed, ContainerStatuses: statuses})
		st, _ := e.m.PodStatus("1")
		for i, c := range st.ContainerStatuses {
			if len(c.State.Terminated.Message) != 256 {
				t.Fatalf("F66 message of %s has %d bytes; want 256", c.Name, len(c.State.Terminated.Message))
			}
			if c.State.Terminated.FinishedAt.Nanosecond() != 0 {
				t.Fatalf("F66 time not truncated to seconds")
			}
			if i > 0 && st.ContainerStatuses[i-1].Name > c.Name {
				t.Fatalf("F66 container statuses not sorted")
			}
		}
		v := e.m.Version("1")
		slices.Reverse(statuses)
		e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodFailed, ContainerStatuses: statuses})
		if e.m.Version("1") != v {
			t.Errorf("F66 order changed the status")
		}
	})
}

func TestIllegalContainerRegression(t *testing.T) {
	tests := []struct {
		name    string
		policy  v1.RestartPolicy
		oldCode int32
		reject  bool
	}{
		{name: "F67 Never: terminated cannot run again", policy: v1.RestartPolicyNever, oldCode: 0, reject: true},
		{name: "F67 OnFailure: succeeded cannot run again", policy: v1.RestartPolicyOnFailure, oldCode: 0, reject: true},
		{name: "F67 OnFailure: failed may restart", policy: v1.RestartPolicyOnFailure, oldCode: 1, reject: false},
		{name: "F67 Always: restarts are fine", policy: v1.RestartPolicyAlways, oldCode: 0, reject: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newStatusEnv()
			pod := apiPod("1", "p")
			pod.Spec.RestartPolicy = tt.policy
			e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{terminated("c1", tt.oldCode), running("c2", "2")}})
			v := e.m.Version("1")
			e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("c1", "3"), running("c2", "2")}})
			if rejected := e.m.Version("1") == v; rejected != tt.reject {
				t.Errorf("rejected %t; want %t", rejected, tt.reject)
			}
		})
	}
}

func TestIllegalInitContainerRegression(t *testing.T) {
	// F67: restartable init containers (sidecars, restartPolicy Always on
	// the init container) may run again after they terminated; ordinary
	// init containers may not under RestartPolicy Never.
	always := v1.ContainerRestartPolicyAlways
	tests := []struct {
		name        string
		restartable bool
		reject      bool
	}{
		{name: "F67 restartable init container may run again", restartable: true, reject: false},
		{name: "F67 ordinary init container cannot run again", restartable: false, reject: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newStatusEnv()
			pod := apiPod("1", "p")
			pod.Spec.RestartPolicy = v1.RestartPolicyNever
			pod.Spec.InitContainers = []v1.Container{{Name: "init"}}
			if tt.restartable {
				pod.Spec.InitContainers[0].RestartPolicy = &always
			}
			e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodPending,
				InitContainerStatuses: []v1.ContainerStatus{terminated("init", 1)},
				ContainerStatuses:     []v1.ContainerStatus{waiting("c1")}})
			v := e.m.Version("1")
			e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodPending,
				InitContainerStatuses: []v1.ContainerStatus{running("init", "2")},
				ContainerStatuses:     []v1.ContainerStatus{waiting("c1")}})
			if rejected := e.m.Version("1") == v; rejected != tt.reject {
				t.Errorf("rejected %t; want %t", rejected, tt.reject)
			}
			st, _ := e.m.PodStatus("1")
			if isRunning := st.InitContainerStatuses[0].State.Running != nil; isRunning == tt.reject {
				t.Errorf("init container running %t after the update; want %t", isRunning, !tt.reject)
			}
		})
	}
}

func TestTerminatingPodReportsNoNewStarts(t *testing.T) {
	t.Run("G70 a terminating pod reports no newly started container", func(t *testing.T) {
		e := newStatusEnv()
		pod := apiPod("1", "p")
		e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{running("c1", "1"), waiting("c2")}})
		e.state.terminating["1"] = true
		e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("c1", "1"), running("c2", "2")}})
		st, _ := e.m.PodStatus("1")
		if st.ContainerStatuses[1].State.Running != nil {
			t.Errorf("G70 a terminating pod reported a newly started container: %+v", st.ContainerStatuses[1])
		}
		if st.ContainerStatuses[0].State.Running == nil {
			t.Errorf("a container running before termination was hidden")
		}
	})
}

func TestStatusChangedWakesOnNewVersionsOnly(t *testing.T) {
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	e := newStatusEnv()
	pod := apiPod("1", "p")
	pending := v1.PodStatus{Phase: v1.PodPending}
	first := e.m.Changed()
	e.m.SetPodStatus(pod, pending)
	if !closed(first) {
		t.Fatal("a new pod's first status did not close Changed")
	}
	second := e.m.Changed()
	if closed(second) {
		t.Fatal("Changed after a version is already closed; want a fresh channel")
	}
	e.m.SetPodStatus(pod, pending)
	if closed(second) {
		t.Error("the same status again closed Changed; want no wake without a new version")
	}
	e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning})
	if !closed(second) {
		t.Error("a new version did not close Changed")
	}
}

// TestFinishedPodIsReadOnlyWhenItMustBe checks that the full batch re-syncs
// a finished pod only when its version moved or it can be deleted (the
// config pod is marked for deletion), as the kubelet's needsUpdate: a
// completed pod was read from the sink in every full batch, forever
// (issue 24; in Kubernetes mode each read is a GET of the API server).
func TestFinishedPodIsReadOnlyWhenItMustBe(t *testing.T) {
	for _, tc := range []struct {
		name string
		// stale leaves the config pod with the status it was applied
		// with, as a local source does.
		stale bool
	}{
		{name: "config holds the status written"},
		{name: "config holds the status it was applied with", stale: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newStatusEnv()
			pod := apiPod("1", "p")
			e.sink.Store(pod)
			e.lookup.pods["1"] = pod
			e.m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodSucceeded, ContainerStatuses: []v1.ContainerStatus{terminated("c1", 0), terminated("c2", 0)}})
			e.m.TerminatePod(pod)
			e.m.SyncBatch(ctx, false)
			wantCalls(t, e.sink, "get ns/p", "put ns/p")
			if !tc.stale {
				e.lookup.pods["1"], _ = e.sink.Pod("ns", "p")
			}
			for range 6 {
				e.m.SyncBatch(ctx, true)
			}
			wantCalls(t, e.sink)

			// Deleted once finished: the next full batch deletes it.
			deleted := pod.DeepCopy()
			if p, ok := e.sink.Pod("ns", "p"); ok {
				deleted.Status = p.Status
			}
			ts := metav1.NewTime(time.Unix(900, 0))
			deleted.DeletionTimestamp = &ts
			e.sink.Store(deleted)
			e.lookup.pods["1"] = deleted
			e.m.SyncBatch(ctx, true)
			if calls := e.sink.Calls(); !slices.Contains(calls, "delete ns/p") {
				t.Errorf("sink calls %q after the deletion; want a delete", calls)
			}
			if _, ok := e.m.PodStatus("1"); ok {
				t.Errorf("status kept after the delete")
			}
		})
	}
}
