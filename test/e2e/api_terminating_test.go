package e2e

import (
	"os"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/images/localimages"
)

// TestAPIDeletedPodListedUntilFinished removes a static pod's manifest
// while its container takes seconds to stop: until the container is
// stopped, the API keeps serving the pod (list, get, watch) with its
// deletionTimestamp and reason Terminating, as kubectl shows a deleted pod;
// it is gone once it finished.
func TestAPIDeletedPodListedUntilFinished(t *testing.T) {
	h := startPodHost(t)
	name := staticName(t, "slow")
	path := h.writeManifest("slow.yaml", `apiVersion: v1
kind: Pod
metadata: {name: slow}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 30
  containers:
  - name: app
    image: `+localimages.BusyboxName+`
    imagePullPolicy: Never
    command: [sh, -c, "trap 'sleep 4; exit 0' TERM; while true; do sleep 1; done"]
`)
	p := h.waitPod(name, 60*time.Second, "running", running)
	uid := string(p.UID)

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	// While the container still runs, the pod is served as terminating.
	servedTerminating := false
	poll(t, 30*time.Second, func() bool {
		if len(h.runningContainers(uid)) == 0 {
			return true
		}
		d, err := h.client.Pod(t.Context(), "default", name)
		if err != nil {
			t.Fatalf("pod %s not served while its container still runs: %v\nruntime: %s", name, err, h.criSummary(p))
		}
		if d.Pod.DeletionTimestamp == nil || d.Summary.Reason != "Terminating" || d.Summary.DeletionTimestamp == nil {
			return false // the removal is not seen yet
		}
		list, err := h.client.Pods(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		listed := false
		for _, s := range list {
			listed = listed || (s.Name == name && s.UID == uid && s.Reason == "Terminating" && s.DeletionTimestamp != nil)
		}
		if !listed {
			t.Fatalf("pod %s not in pods list as Terminating while its container still runs: %+v", name, list)
		}
		servedTerminating = true
		return false
	}, func() string { return "container of " + name + " still runs\n" + h.logTail() })
	if !servedTerminating {
		t.Fatalf("the container stopped before the pod was ever seen terminating: %s", h.criSummary(p))
	}
	h.waitGone(name, 30*time.Second)
	for _, c := range h.criContainers(uid) {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Errorf("pod gone from the API while container %s runs", c.Id)
		}
	}
}
