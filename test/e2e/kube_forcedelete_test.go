package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/test/criproxy"
)

// TestKubeForceDeleteWhileTheRuntimeFails force-deletes a running pod in
// the API server (grace 0, as kubectl delete --force --grace-period=0)
// while containerd fails StopContainer and StopPodSandbox: a proxy in
// front of its socket fails them a few times with the code containerd
// gives a failed kill. The API object is gone at once; the node retries,
// and once the runtime answers again it terminates the pod all the same:
// the container stopped and removed, the sandbox removed, and nothing of
// the pod created again. The host's log and the pod's events show the
// failed attempts.
func TestKubeForceDeleteWhileTheRuntimeFails(t *testing.T) {
	var proxy *criproxy.Proxy
	k := startKubeHostVia(t, "", viaProxy(t, &proxy))
	k.waitNodeReady(time.Minute)
	k.create(kubePod("doomed", v1.RestartPolicyAlways, sh("app", "trap 'exit 0' TERM; while true; do sleep 0.2; done")))
	p := k.waitAPIRunning("doomed", time.Minute)
	uid := string(p.UID)

	const stopFailures, sandboxFailures = 3, 2
	proxy.Reset()
	proxy.Fail("StopContainer", stopFailures, codes.Unknown)
	proxy.Fail("StopPodSandbox", sandboxFailures, codes.Unknown)
	zero := int64(0)
	k.deleteAPIPod("doomed", &zero)
	k.waitAPIGone("doomed", 10*time.Second)

	k.waitRuntimeEmpty(uid, 2*time.Minute)
	calls, failed := proxy.Calls(), proxy.Failed()
	for _, m := range []struct {
		method string
		fails  int
	}{{"StopContainer", stopFailures}, {"StopPodSandbox", sandboxFailures}} {
		if failed[m.method] != m.fails || calls[m.method] <= m.fails {
			t.Errorf("%s: %d calls, %d failed; want all %d failures and a call after them", m.method, calls[m.method], failed[m.method], m.fails)
		}
	}
	if calls["RemoveContainer"] == 0 || calls["RemovePodSandbox"] == 0 {
		t.Errorf("calls %v; want the container and the sandbox removed", calls)
	}

	// Nothing of the pod comes back: over a few housekeeping rounds (2 s)
	// and relists (1 s), containerd is asked to create nothing.
	<-time.After(8 * time.Second)
	calls = proxy.Calls()
	for _, m := range []string{"RunPodSandbox", "CreateContainer", "StartContainer"} {
		if calls[m] != 0 {
			t.Errorf("%d %s calls after the force delete; want none: %v", calls[m], m, calls)
		}
	}
	if left := k.criContainers(uid); len(left) != 0 {
		t.Errorf("containers of the deleted pod in containerd: %v", left)
	}

	// The failed attempts are in the host's log and the pod's events.
	if n := strings.Count(k.fullLog(), "injected failure of StopContainer"); n == 0 {
		t.Errorf("the host's log does not show the failed StopContainer calls\n%s", k.logTail())
	}
	var reasons []string
	for _, e := range k.events("doomed") {
		reasons = append(reasons, e.Reason)
	}
	if !slices.Contains(reasons, "FailedToKillPod") {
		t.Errorf("pod events %v; want FailedToKillPod for the failed kills", reasons)
	}
}

// fullLog is every log of the host so far, in order.
func (h *podHost) fullLog() string {
	h.mu.Lock()
	logs := slices.Clone(h.logs)
	h.mu.Unlock()
	var b strings.Builder
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(&b, "reading %s: %v\n", path, err)
			continue
		}
		b.Write(data)
	}
	return b.String()
}
