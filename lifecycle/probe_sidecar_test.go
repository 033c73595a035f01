package lifecycle_test

import (
	"slices"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/lifecycle"
)

// sidecarFixture is a probeFixture whose probed container is the sidecar
// side (an init container with restartPolicy Always) next to the app
// container app, which has no probe. syncs receives the pod syncs the
// probe manager asks for.
type sidecarFixture struct {
	*probeFixture
	syncs chan types.UID
}

func newSidecarFixture(side v1.Container, policy v1.RestartPolicy) *sidecarFixture {
	always := v1.ContainerRestartPolicyAlways
	side.Name, side.Image, side.RestartPolicy = "side", "busybox", &always
	syncs := make(chan types.UID, 8)
	f := &sidecarFixture{syncs: syncs, probeFixture: newProbeFixtureOf(v1.PodSpec{RestartPolicy: policy,
		InitContainers: []v1.Container{side}, Containers: []v1.Container{{Name: "app", Image: "busybox"}}}, syncs)}
	f.setSidecar("s1", lifecycle.ContainerRunning)
	return f
}

// setSidecar puts the sidecar instance id in the given state, next to a
// running app container, into the runtime cache and the status manager.
func (f *sidecarFixture) setSidecar(id string, state lifecycle.ContainerState) {
	rs := &lifecycle.PodStatus{ID: f.pod.UID, Name: "p", Namespace: "default", SandboxReady: true,
		ContainerStatuses: []lifecycle.ContainerStatus{
			{ID: id, Name: "side", State: state, StartedAt: f.clock.Now(), ExitCode: 137},
			{ID: "a1", Name: "app", State: lifecycle.ContainerRunning, StartedAt: f.clock.Now()}}}
	f.cache.Set(f.pod.UID, rs, nil, f.clock.Now())
	f.status.SetPodStatus(f.pod, lifecycle.GeneratePodStatus(f.pod, rs, v1.PodStatus{}, false, nil))
}

// sidecar returns the sidecar's status and the pod's condition typ.
func (f *sidecarFixture) sidecar(t *testing.T, typ v1.PodConditionType) (v1.ContainerStatus, v1.PodCondition) {
	t.Helper()
	st, ok := f.status.PodStatus(f.pod.UID)
	if !ok || len(st.InitContainerStatuses) != 1 {
		t.Fatalf("no sidecar status: %+v", st)
	}
	var cond v1.PodCondition
	for _, c := range st.Conditions {
		if c.Type == typ {
			cond = c
		}
	}
	return st.InitContainerStatuses[0], cond
}

// TestProbeManagerSidecarReadiness checks that a sidecar's readiness probe
// runs and that its result counts for the pod's ContainersReady and Ready.
func TestProbeManagerSidecarReadiness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newSidecarFixture(v1.Container{ReadinessProbe: &v1.Probe{}}, v1.RestartPolicyAlways)
		cs, cond := f.sidecar(t, v1.PodReady)
		if cs.Ready || cond.Status != v1.ConditionFalse || cond.Message != "containers with unready status: [side]" {
			t.Fatalf("before any probe: sidecar ready %v, Ready %s %q; want not ready, False naming side", cs.Ready, cond.Status, cond.Message)
		}
		f.prober.set(lifecycle.Readiness, lifecycle.ProbeSuccess)
		stop := f.run()
		defer stop()
		f.manager.AddPod(f.pod)
		synctest.Wait()
		if cs, cond := f.sidecar(t, v1.ContainersReady); !cs.Ready || cond.Status != v1.ConditionTrue {
			t.Fatalf("after a success: sidecar ready %v, ContainersReady %s; want ready, True", cs.Ready, cond.Status)
		}
		if n := f.prober.count(lifecycle.Readiness); n != 1 {
			t.Fatalf("readiness probes of the sidecar: %d, want 1", n)
		}
	})
}

// TestProbeManagerSidecarLivenessRestarts checks that a sidecar whose
// liveness probe fails is killed with the kubelet's message, also under
// restartPolicy Never (a sidecar always restarts), and that its worker
// probes the new instance.
func TestProbeManagerSidecarLivenessRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newSidecarFixture(v1.Container{LivenessProbe: &v1.Probe{FailureThreshold: 1}}, v1.RestartPolicyNever)
		f.prober.set(lifecycle.Liveness, lifecycle.ProbeFailure)
		stop := f.run()
		defer stop()
		f.manager.AddPod(f.pod)
		synctest.Wait()
		if k := f.kills.list(); !slices.Equal(k, []string{"side/s1/30s"}) {
			t.Fatalf("kills: %q; want side/s1 with the default grace", k)
		}
		if ev := f.events.Events(); !slices.Contains(ev, "Normal Killing p: Init container side failed liveness probe") {
			t.Fatalf("events: %q", ev)
		}
		f.setSidecar("s1", lifecycle.ContainerExited)
		f.period()
		if n := f.manager.Workers(); n != 1 {
			t.Fatalf("workers once the sidecar exited under Never: %d, want 1 (it restarts)", n)
		}
		f.prober.set(lifecycle.Liveness, lifecycle.ProbeSuccess)
		runs := f.prober.count(lifecycle.Liveness)
		f.setSidecar("s2", lifecycle.ContainerRunning)
		f.period()
		if got := f.prober.count(lifecycle.Liveness); got != runs+1 {
			t.Fatalf("the restarted sidecar: %d runs, want %d", got, runs+1)
		}
	})
}

// TestProbeManagerSidecarStartupSyncsPod checks that a sidecar is not
// started (nor the pod initialized) before its startup probe succeeded,
// and that the success asks for a sync of the pod, which lets the runtime
// start the next container.
func TestProbeManagerSidecarStartupSyncsPod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newSidecarFixture(v1.Container{StartupProbe: &v1.Probe{}}, v1.RestartPolicyAlways)
		f.pod.Spec.Containers[0].Name = "later" // no app container ran yet
		f.setSidecar("s1", lifecycle.ContainerRunning)
		f.prober.set(lifecycle.Startup, lifecycle.ProbeFailure)
		stop := f.run()
		defer stop()
		f.manager.AddPod(f.pod)
		synctest.Wait()
		cs, cond := f.sidecar(t, v1.PodInitialized)
		if cs.Started == nil || *cs.Started || cond.Status != v1.ConditionFalse || cond.Message != "containers with incomplete status: [side]" {
			t.Fatalf("before startup: started %v, Initialized %s %q; want false, False naming side", cs.Started, cond.Status, cond.Message)
		}
		select {
		case uid := <-f.syncs:
			t.Fatalf("sync of %s asked before the startup probe succeeded", uid)
		default:
		}
		f.prober.set(lifecycle.Startup, lifecycle.ProbeSuccess)
		f.period()
		select {
		case uid := <-f.syncs:
			if uid != f.pod.UID {
				t.Fatalf("sync asked for %s; want %s", uid, f.pod.UID)
			}
		default:
			t.Fatal("no sync asked once the sidecar's startup probe succeeded")
		}
		if cs, cond := f.sidecar(t, v1.PodInitialized); cs.Started == nil || !*cs.Started || cond.Status != v1.ConditionTrue {
			t.Fatalf("after startup: started %v, Initialized %s; want true, True", cs.Started, cond.Status)
		}
		started, _ := lifecycle.NewProbeResults().ContainerProbes(f.pod, "side", "s1")
		if started {
			t.Fatal("an empty results cache says the sidecar started")
		}
	})
}
