package e2e

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestProbeSidecar runs a pod under restartPolicy Never with a sidecar
// (init container side, restartPolicy Always), an init container setup
// that needs the sidecar's web server, and an app container, as the
// kubelet runs them:
//   - setup starts only once the sidecar's startup probe succeeded (the
//     sidecar serves after 3 s; setup fails, and with it the pod, if the
//     server is not up);
//   - the sidecar's readiness counts for the pod's Ready: False with
//     "containers with unready status: [side]" while only the sidecar is
//     not ready, True once it is;
//   - a liveness failure restarts the sidecar although the pod's policy is
//     Never, with the event "Init container side failed liveness probe",
//     and the app container and the pod keep running.
//
// The first sidecar instance creates /tmp/die after it became ready; an
// emptyDir remembers that it ran, so the second instance does not.
func TestProbeSidecar(t *testing.T) {
	h := startPodHost(t)
	port := freePort(t)
	side := sh("side", fmt.Sprintf(`first=yes; [ -e /state/ran ] && first=no; touch /state/ran
sleep 3; touch /tmp/up
mkdir -p /www; echo ok > /www/index.html; httpd -p 127.0.0.1:%d -h /www
sleep 6; touch /tmp/ready
if [ $first = yes ]; then sleep 3; touch /tmp/die; fi
while true; do sleep 1; done`, port))
	always, grace := v1.ContainerRestartPolicyAlways, int64(1)
	side.RestartPolicy = &always
	side.VolumeMounts = []v1.VolumeMount{{Name: "state", MountPath: "/state"}}
	// Timeouts well above the default 1 s: an exec on a busy machine
	// may take longer, and a timed-out liveness probe is a failure.
	side.StartupProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: execCmd("test -e /tmp/up")}, PeriodSeconds: 1, TimeoutSeconds: 10, FailureThreshold: 60}
	side.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: execCmd("test -e /tmp/ready")}, PeriodSeconds: 1, TimeoutSeconds: 10}
	side.LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: execCmd("test ! -e /tmp/die")},
		PeriodSeconds: 1, TimeoutSeconds: 10, FailureThreshold: 2, TerminationGracePeriodSeconds: &grace}
	setup := sh("setup", fmt.Sprintf("wget -q -O- http://127.0.0.1:%d/index.html", port))
	pod := busyPod("sidecar", v1.RestartPolicyNever, sh("app", "while true; do sleep 1; done"))
	pod.Spec.InitContainers = []v1.Container{side, setup}
	for i := range pod.Spec.InitContainers {
		pod.Spec.InitContainers[i].Image = pod.Spec.Containers[0].Image
		pod.Spec.InitContainers[i].ImagePullPolicy = v1.PullNever
	}
	pod.Spec.Volumes = []v1.Volume{volume("state", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})}
	h.apply(pod)

	notReady := h.waitPod("sidecar", 90*time.Second, "app running, sidecar not ready", func(p *v1.Pod) bool {
		s := containerStatus(p, "side")
		return running(p) && s != nil && s.State.Running != nil && s.RestartCount == 0 && !s.Ready
	})
	byName := map[string]*runtimeapi.ContainerStatus{}
	for _, c := range h.criContainers(string(notReady.UID)) {
		byName[c.Metadata.Name] = c
	}
	s, st := byName["side"], byName["setup"]
	if s == nil || st == nil || st.StartedAt == 0 {
		t.Fatalf("sidecar %v, setup %v: want both started", s, st)
	}
	if gap := time.Duration(st.StartedAt - s.StartedAt); gap < 2500*time.Millisecond {
		t.Errorf("setup started %v after the sidecar; want after its startup probe succeeded (3 s)", gap)
	}
	if cs := containerStatus(notReady, "setup"); cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
		t.Errorf("setup: %+v; want exit 0 (the sidecar served)", cs.State)
	}
	if cs := containerStatus(notReady, "side"); cs.Started == nil || !*cs.Started {
		t.Errorf("running sidecar past its startup probe: started %v; want true", cs.Started)
	}
	ready := findPodCondition(notReady, v1.PodReady)
	if ready.Status != v1.ConditionFalse || ready.Reason != "ContainersNotReady" || ready.Message != "containers with unready status: [side]" {
		t.Errorf("Ready while only the sidecar is not ready: %+v; want False, ContainersNotReady, containers with unready status: [side]", ready)
	}
	if c := findPodCondition(notReady, v1.PodInitialized); c.Status != v1.ConditionTrue {
		t.Errorf("Initialized with the sidecar started and setup done: %+v; want True", c)
	}

	h.waitPod("sidecar", 60*time.Second, "Ready True", func(p *v1.Pod) bool { return podCondition(p, v1.PodReady) == v1.ConditionTrue })

	restarted := h.waitPod("sidecar", 60*time.Second, "sidecar restarted", func(p *v1.Pod) bool {
		s := containerStatus(p, "side")
		return s != nil && s.RestartCount >= 1 && s.State.Running != nil
	})
	if cs := containerStatus(restarted, "side"); cs.RestartCount != 1 {
		t.Errorf("sidecar restartCount %d; want 1\n%s", cs.RestartCount, podStatusString(restarted))
	}
	if cs := containerStatus(restarted, "app"); cs.RestartCount != 0 || cs.State.Running == nil {
		t.Errorf("app after the sidecar's restart: %+v; want running, never restarted", cs)
	}
	if restarted.Status.Phase != v1.PodRunning {
		t.Errorf("phase %s after the sidecar's restart under Never; want Running", restarted.Status.Phase)
	}
	evs := h.events("sidecar")
	if !hasEvent(evs, "Killing", "Init container side failed liveness probe") {
		t.Errorf("no Killing event for the sidecar's liveness:\n%s", eventsString(evs))
	}
	if !hasEvent(evs, "Unhealthy", "Liveness probe failed") {
		t.Errorf("no Unhealthy event:\n%s", eventsString(evs))
	}
}
