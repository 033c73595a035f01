package e2e

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestKubeDeleteWaitsForTheContainers deletes a pod through the API server
// whose container takes two seconds to stop on SIGTERM: the API object
// stays, marked for deletion, while the container stops, and is gone only
// once containerd has no running container of it; its last status has
// every container terminated (the status manager deletes only then).
func TestKubeDeleteWaitsForTheContainers(t *testing.T) {
	k := startKubeHost(t)
	pod := kubePod("slow", v1.RestartPolicyAlways, sh("app", "trap 'sleep 2; exit 0' TERM; while true; do sleep 0.2; done"))
	grace := int64(20)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	k.create(pod)
	p := k.waitAPIRunning("slow", 60*time.Second)
	uid := string(p.UID)

	ctx := t.Context()
	w, err := k.pods.Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", "slow").String(), ResourceVersion: p.ResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	k.deleteAPIPod("slow", nil)
	deleting, ok := k.apiPod("slow")
	if !ok || deleting.DeletionTimestamp == nil {
		t.Fatalf("right after a graceful delete the pod is %v (found %v); want it there, marked for deletion", deleting, ok)
	}

	deadline := time.After(90 * time.Second)
	for {
		select {
		case ev, open := <-w.ResultChan():
			if !open {
				t.Fatal("the watch closed before the pod was deleted")
			}
			if ev.Type != watch.Deleted {
				continue
			}
			// The object is gone: nothing of the pod may run now.
			for _, c := range k.criContainers(uid) {
				if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
					t.Errorf("the API object is gone while container %s still runs", c.Id)
				}
			}
			last := ev.Object.(*v1.Pod)
			for _, c := range last.Status.ContainerStatuses {
				if c.State.Terminated == nil {
					t.Errorf("last status of container %s: %+v; want terminated", c.Name, c.State)
				}
			}
			if last.Status.Phase != v1.PodSucceeded && last.Status.Phase != v1.PodFailed {
				t.Errorf("last phase %s; want a terminal one", last.Status.Phase)
			}
			return
		case <-deadline:
			t.Fatalf("pod not deleted within 90 s; last %s\n%s", podStatusString(deleting), k.logTail())
		}
	}
}
