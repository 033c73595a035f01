package e2e

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/localapi"
)

// TestNodeShutdown: `podhost node shutdown` stops every pod within the
// shutdown grace period without marking any Failed (a restartPolicy Never
// pod whose container exits 1 on SIGTERM included), leaves a finished job
// alone, and once the host starts again every stopped pod runs again while
// the job stays Succeeded and is not re-run.
func TestNodeShutdown(t *testing.T) {
	h := startPodHost(t)
	ctx := t.Context()
	service := staticName(t, "svc")
	h.writeManifest("svc.yaml", staticManifest("svc", "serving"))
	once := busyPod("once", v1.RestartPolicyNever, sh("main", `trap "exit 1" TERM; while true; do sleep 1; done`))
	h.apply(once)
	h.apply(busyPod("job", v1.RestartPolicyNever, sh("main", "echo job done")))

	svc := h.waitPod(service, 60*time.Second, "running", running)
	oncePod := h.waitPod("once", 60*time.Second, "running", running)
	job := h.waitPhase("job", v1.PodSucceeded, 60*time.Second)

	start := time.Now()
	out, err := h.hostCLI(ctx, "node", "shutdown")
	if err != nil {
		t.Fatalf("podhost node shutdown: %v\n%s\n%s", err, out, h.logTail())
	}
	took := time.Since(start)
	t.Logf("podhost node shutdown (%s):\n%s", took.Round(time.Millisecond), out)
	for _, want := range []string{"2 pods stopped", "default/" + service, "default/once", "grace period 30s"} {
		if !strings.Contains(out, want) {
			t.Errorf("podhost node shutdown output lacks %q", want)
		}
	}
	if strings.Contains(out, "default/job") {
		t.Errorf("the finished job was stopped again:\n%s", out)
	}

	t.Run("pods stopped, not Failed", func(t *testing.T) {
		for _, p := range []*v1.Pod{svc, oncePod} {
			if n := len(h.runningContainers(string(p.UID))); n != 0 {
				t.Errorf("pod %s: %d containers still running after the shutdown", p.Name, n)
			}
			h.waitRuntimeEmpty(string(p.UID), 30*time.Second)
			got := h.waitPod(p.Name, 10*time.Second, "reason NodeShutdown", func(p *v1.Pod) bool { return p.Status.Reason == "NodeShutdown" })
			if got.Status.Phase != v1.PodRunning {
				t.Errorf("pod %s after the shutdown: phase %s; want Running kept (never Failed)\n%s", p.Name, got.Status.Phase, podStatusString(got))
			}
		}
		if j, _ := h.get("job"); j == nil || j.Status.Phase != v1.PodSucceeded {
			t.Errorf("job after the shutdown: %s; want Succeeded", podStatusString(j))
		}
		if line, all := h.podsListLine("default/once", "Running", "NodeShutdown"); line == "" {
			t.Errorf("podhost pods list does not show once as Running/NodeShutdown:\n%s", all)
		}
		n, err := h.client.Node(ctx)
		if err != nil || n.Ready || !strings.Contains(n.NotReady, "shutting down") {
			t.Errorf("GET /v1/node after the shutdown: ready %v (%q), %v; want not ready: node is shutting down", n.Ready, n.NotReady, err)
		}
		evs, err := h.client.Events(ctx, localapi.EventFilter{Kind: "Node"})
		if err != nil || !hasEvent(evs, "NodeShutdown", "stopping 2 pods") {
			t.Errorf("no NodeShutdown node event: %v\n%s", err, eventsString(evs))
		}
	})

	t.Run("host restarted: stopped pods run again", func(t *testing.T) {
		h.sigtermHost()
		h.start()
		for _, p := range []*v1.Pod{svc, oncePod} {
			got := h.waitPod(p.Name, 60*time.Second, "running again", running)
			if got.UID != p.UID {
				t.Errorf("pod %s runs as uid %s; want the same pod %s", p.Name, got.UID, p.UID)
			}
		}
		j := h.waitPhase("job", v1.PodSucceeded, 10*time.Second)
		if j.UID != job.UID {
			t.Errorf("job uid %s → %s", job.UID, j.UID)
		}
		if ctrs := h.criContainers(string(job.UID)); len(ctrs) != 1 {
			t.Errorf("the job has %d containers after the restart; want its one finished container (not re-run)", len(ctrs))
		}
		evs, _ := h.client.Events(ctx, localapi.EventFilter{Kind: "Node"})
		if !hasEvent(evs, "NodeShutdown", "starting 2 stopped pods again") {
			t.Errorf("no node event about starting the stopped pods again:\n%s", eventsString(evs))
		}
	})
}
