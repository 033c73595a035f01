package e2e

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/images/localimages"
	"github.com/podhost/podhost/lifecycle"
)

// TestStateTerminalSurvivesRestart stops the host once its Never pods
// finished, removes their containers from containerd and starts the host
// again: the pods stay finished, with the container statuses they had, and
// nothing of them runs again.
func TestStateTerminalSurvivesRestart(t *testing.T) {
	h := startPodHost(t)
	job := staticName(t, "job")
	h.writeManifest("job.yaml", `apiVersion: v1
kind: Pod
metadata: {name: job}
spec:
  hostNetwork: true
  restartPolicy: Never
  containers: [{name: app, image: `+localimages.BusyboxName+`, imagePullPolicy: Never, command: [sh, -c, "echo done"]}]
`)
	h.apply(busyPod("done", v1.RestartPolicyNever, sh("app", "echo done")))
	h.apply(busyPod("failed", v1.RestartPolicyNever, sh("app", "exit 3")))
	before := map[string]*v1.Pod{
		"done":   h.waitPhase("done", v1.PodSucceeded, 60*time.Second),
		"failed": h.waitPhase("failed", v1.PodFailed, 60*time.Second),
		job:      h.waitPhase(job, v1.PodSucceeded, 60*time.Second),
	}
	for name, p := range before {
		if c := containerStatus(p, "app"); c == nil || c.State.Terminated == nil {
			t.Fatalf("%s before the restart: %s; want its container terminated", name, podStatusString(p))
		}
	}

	h.sigtermHost()
	for name, p := range before {
		if c := storedContainer(h.storedPod(name), "app"); c == nil || c.State.Terminated == nil {
			t.Fatalf("%s: the state database does not hold its container as terminated after a clean stop: %+v", name, c)
		}
		h.removeFromRuntime(string(p.UID))
	}
	h.start()

	for name, p := range before {
		want := containerStatus(p, "app")
		after := h.waitPod(name, 60*time.Second, "the status it had before the restart", func(now *v1.Pod) bool {
			return now.Status.Phase == p.Status.Phase && terminatedAs(containerStatus(now, "app"), want)
		})
		if c := containerStatus(after, "app"); c.State.Terminated.Reason == lifecycle.ReasonContainerStatusUnknown {
			t.Errorf("%s after the restart: container lost: %+v", name, c)
		}
	}
	// Nothing of them runs again: watch the runtime for a while after the
	// new host synced them.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for name, p := range before {
			if cs := h.criContainers(string(p.UID)); len(cs) > 0 {
				t.Fatalf("%s ran again after the restart: %s\n%s", name, h.criSummary(p), h.logTail())
			}
			if now, ok := h.get(name); !ok || now.Status.Phase != p.Status.Phase || !terminatedAs(containerStatus(now, "app"), containerStatus(p, "app")) {
				t.Fatalf("%s after the restart: %s; want %s", name, podStatusString(now), podStatusString(p))
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestStateDeletedTerminalPodAcrossRestart deletes a finished pod and kills
// the host before it has removed it, then removes the pod's containers from
// containerd: the new host finishes the deletion, and every status it
// serves meanwhile has the container statuses the pod had, never exit 137
// for a container it merely cannot find any more.
func TestStateDeletedTerminalPodAcrossRestart(t *testing.T) {
	h := startPodHost(t)
	h.apply(busyPod("done", v1.RestartPolicyNever, sh("app", "echo done")))
	p := h.waitPhase("done", v1.PodSucceeded, 60*time.Second)
	want := containerStatus(p, "app")
	if want == nil || want.State.Terminated == nil {
		t.Fatalf("before the delete: %s; want the container terminated", podStatusString(p))
	}
	grace := int64(30)
	h.delete("done", &grace)
	h.kill()
	if c := storedContainer(h.storedPod("done"), "app"); c == nil || c.State.Terminated == nil {
		t.Fatalf("the state database does not hold the deleted pod's container as terminated: %+v", c)
	}
	h.removeFromRuntime(string(p.UID))

	changes := h.startWatching()
	h.waitGone("done", 60*time.Second)
	seen := 0
	for {
		select {
		case ev := <-changes:
			if ev.Pod == nil || ev.Pod.Name != "done" || ev.Type == "DELETED" {
				continue
			}
			seen++
			c := containerStatus(ev.Pod, "app")
			if c == nil || !terminatedAs(c, want) {
				t.Errorf("%s served after the restart: %s; want the container as before: %+v", ev.Type, podStatusString(ev.Pod), want.State.Terminated)
			}
			continue
		default:
		}
		break
	}
	// The new host may finish the deletion before the watch is connected
	// (it has no container to stop): then there is nothing served to
	// check, which is no failure. TestFinishedSyncer (host/node) checks
	// the statuses reported for such a pod without that race.
	t.Logf("%d changes of the pod seen after the restart", seen)
}
