package e2e

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/host/runtimemanager"
)

// fullStatusBatch is a little more than the status manager's full batch
// period (10 s): once it has passed, every status was compared with the
// API server's at least once.
const fullStatusBatch = 12 * time.Second

// runningKubePods creates n pods and returns them once they run.
func (k *kubeHost) runningKubePods(prefix string, n int) []*v1.Pod {
	k.t.Helper()
	for i := range n {
		k.create(kubePod(fmt.Sprintf("%s-%d", prefix, i), v1.RestartPolicyAlways, sh("app", "while true; do sleep 1; done")))
	}
	var out []*v1.Pod
	for i := range n {
		out = append(out, k.waitAPIRunning(fmt.Sprintf("%s-%d", prefix, i), 90*time.Second))
	}
	return out
}

// checkUntouched checks that each pod still runs the container it ran
// before, never restarted and alone in containerd, with one sandbox.
func (k *kubeHost) checkUntouched(before []*v1.Pod) {
	k.t.Helper()
	for _, b := range before {
		now, ok := k.apiPod(b.Name)
		if !ok {
			k.t.Errorf("%s: gone from the API server", b.Name)
			continue
		}
		want := containerIDs(b)["app"]
		if want == "" {
			k.t.Errorf("%s: no container ID in the status before: %s", b.Name, podStatusString(b))
		}
		if c := containerStatus(now, "app"); c == nil || c.RestartCount != 0 || containerIDs(now)["app"] != want || c.State.Running == nil {
			k.t.Errorf("%s: container status %+v; want container %s running, restartCount 0", b.Name, c, want)
		}
		ctrs := k.criContainers(string(b.UID))
		if len(ctrs) != 1 || ctrs[0].Id != want || ctrs[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			k.t.Errorf("%s: containerd has %v; want only %s, running", b.Name, ctrs, want)
		}
		sbs, err := criSandboxes(k.t.Context(), k.ctrd, map[string]string{runtimemanager.LabelPodUID: string(b.UID)})
		if err != nil || len(sbs) != 1 {
			k.t.Errorf("%s: sandboxes %v, %v; want exactly one", b.Name, sbs, err)
		}
	}
}

// TestKubeAPIServerRestart stops the API server while pods run and starts
// it again: the host reconnects (a pod created afterwards runs) and
// resyncs without restarting any container.
func TestKubeAPIServerRestart(t *testing.T) {
	k := startKubeHost(t)
	before := k.runningKubePods("steady", 3)

	ctx := t.Context()
	// With a watch open, kube-apiserver takes longer to exit on SIGTERM
	// than kubecluster waits (its HTTP server drains connections for up to
	// a minute); kubecluster then kills it, which is an outage too.
	if err := k.cluster.StopAPIServer(ctx); err != nil {
		t.Logf("stopping the API server: %v", err)
	}
	// The host keeps its pods while the API server is away: give its
	// watch and status writes time to fail and retry.
	time.Sleep(5 * time.Second)
	for _, b := range before {
		if got := k.runningContainers(string(b.UID)); len(got) != 1 {
			t.Errorf("%s while the API server is down: running containers %v; want its one container", b.Name, got)
		}
	}
	if err := k.cluster.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}

	k.create(kubePod("after", v1.RestartPolicyAlways, sh("app", "sleep 3600")))
	k.waitAPIRunning("after", 90*time.Second)
	// A pod deleted after the restart goes: the watch is live again.
	k.deleteAPIPod("steady-2", nil)
	k.waitAPIGone("steady-2", 90*time.Second)
	k.checkUntouched(before[:2])
}

// TestKubeHostRestart kills the host (SIGKILL) while pods run and starts
// it again on the same root: the pods are adopted without a container
// restart or a second container, and their statuses in the API server do
// not change, not even their resourceVersion, through a full status batch.
func TestKubeHostRestart(t *testing.T) {
	k := startKubeHost(t)
	before := k.runningKubePods("steady", 3)
	// Let the statuses settle (Ready, probes none) before taking them.
	time.Sleep(fullStatusBatch)
	for i, b := range before {
		now, _ := k.apiPod(b.Name)
		before[i] = now
	}

	k.kill()
	k.start()

	k.create(kubePod("after", v1.RestartPolicyAlways, sh("app", "sleep 3600")))
	k.waitAPIRunning("after", 90*time.Second)
	time.Sleep(fullStatusBatch)
	for _, b := range before {
		now, ok := k.apiPod(b.Name)
		if !ok {
			t.Errorf("%s: gone from the API server", b.Name)
			continue
		}
		if !apiequality.Semantic.DeepEqual(b.Status, now.Status) || b.ResourceVersion != now.ResourceVersion {
			t.Errorf("%s: status changed across the host restart (resourceVersion %s → %s):\nbefore %+v\nafter  %+v",
				b.Name, b.ResourceVersion, now.ResourceVersion, b.Status, now.Status)
		}
	}
	k.checkUntouched(before)
}
