package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/host/runtimemanager"
)

// containerWatch records every container of the pods podhost manages
// that containerd reports, polling until stopped, so that containers
// removed later are still seen.
type containerWatch struct {
	mu   sync.Mutex
	seen map[string]*runtimeapi.ContainerStatus
	stop func()
	done chan struct{}
}

func watchContainers(h *podHost) *containerWatch {
	ctx, cancel := context.WithCancel(h.t.Context())
	w := &containerWatch{seen: map[string]*runtimeapi.ContainerStatus{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			cs, err := criContainerStatuses(ctx, h.ctrd, map[string]string{runtimemanager.LabelManagedBy: runtimemanager.ManagedByValue})
			if err == nil {
				w.mu.Lock()
				for _, c := range cs {
					if old, ok := w.seen[c.Id]; !ok || old.StartedAt == 0 {
						w.seen[c.Id] = c
					}
				}
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return w
}

// containers stops the watch and returns what it saw of the pod UID.
func (w *containerWatch) containers(uid string) []*runtimeapi.ContainerStatus {
	w.stop()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*runtimeapi.ContainerStatus
	for _, c := range w.seen {
		if c.Labels[runtimemanager.LabelPodUID] == uid {
			out = append(out, c)
		}
	}
	return out
}

// TestPodDeletedWhileStarting deletes pods while their containers are
// being started and checks that no container of theirs started after the
// delete was observed (the delete call returned), and that an app
// container never starts behind an init container that was still running.
func TestPodDeletedWhileStarting(t *testing.T) {
	h := startPodHost(t)
	w := watchContainers(h)

	// An init container that runs while the pod is deleted: the app
	// containers must never be created.
	initPod := busyPod("init-slow", v1.RestartPolicyAlways, sh("app", "sleep 3600"))
	initPod.Spec.InitContainers = []v1.Container{sh("wait", "sleep 5")}
	initPod.Spec.InitContainers[0].Image = initPod.Spec.Containers[0].Image
	zero := int64(2)
	initPod.Spec.TerminationGracePeriodSeconds = &zero
	h.apply(initPod)
	p := h.waitPod("init-slow", 60*time.Second, "init container running", func(p *v1.Pod) bool {
		c := containerStatus(p, "wait")
		return c != nil && c.State.Running != nil
	})
	initUID := string(p.UID)
	h.delete("init-slow", nil)

	// Many containers, deleted right after the apply.
	var containers []v1.Container
	for i := range 8 {
		containers = append(containers, sh(fmt.Sprintf("c%d", i), "sleep 3600"))
	}
	many := busyPod("many", v1.RestartPolicyAlways, containers...)
	many.Spec.TerminationGracePeriodSeconds = &zero
	h.apply(many)
	var manyUID string
	poll(t, 30*time.Second, func() bool {
		p, ok := h.get("many")
		if ok {
			manyUID = string(p.UID)
		}
		return ok
	}, func() string { return "pod many not listed" })
	// Wait until at least one of its containers exists, then delete.
	poll(t, 60*time.Second, func() bool { return len(h.criContainers(manyUID)) > 0 }, func() string { return "no container of pod many created" })
	h.delete("many", nil)
	deletedMany := time.Now()

	h.waitGone("init-slow", 60*time.Second)
	h.waitGone("many", 60*time.Second)
	// Give a late start the time to show up before the watch ends.
	poll(t, 30*time.Second, func() bool {
		return len(h.criContainers(initUID)) == 0 && len(h.criContainers(manyUID)) == 0
	}, func() string { return "containers of deleted pods still in the runtime" })

	seenInit := w.containers(initUID)
	for _, c := range seenInit {
		if c.Metadata.Name == "app" {
			t.Errorf("app container of init-slow was created (started at %s) though the pod was deleted while its init container ran", time.Unix(0, c.StartedAt))
		}
	}
	if len(seenInit) == 0 {
		t.Errorf("the watch saw no container of init-slow; it cannot have checked anything")
	}
	// A start already in flight when the delete is observed may land a
	// moment later; nothing may start once that moment is past.
	const tolerance = 500 * time.Millisecond
	var started []string
	w2 := w.containers(manyUID)
	for _, c := range w2 {
		if c.StartedAt == 0 {
			continue
		}
		at := time.Unix(0, c.StartedAt)
		started = append(started, fmt.Sprintf("%s %s", c.Metadata.Name, at.Sub(deletedMany)))
		if at.After(deletedMany.Add(tolerance)) {
			t.Errorf("container %s of pod many started %s after the delete returned", c.Metadata.Name, at.Sub(deletedMany))
		}
	}
	t.Logf("pod many: %d containers seen, started relative to the delete: %s", len(w2), strings.Join(started, ", "))
}

// TestPodInitContainers checks that init containers run one at a time, in
// order, each after the previous succeeded, that app containers start only
// after all of them, and that a failing init container under
// restartPolicy Never fails the pod without starting any app container.
func TestPodInitContainers(t *testing.T) {
	h := startPodHost(t)
	ordered := busyPod("ordered", v1.RestartPolicyAlways, sh("app", "echo app; sleep 3600"))
	ordered.Spec.InitContainers = []v1.Container{
		sh("first", "echo first; sleep 1"),
		sh("second", "echo second; sleep 1"),
		sh("third", "echo third"),
	}
	for i := range ordered.Spec.InitContainers {
		ordered.Spec.InitContainers[i].Image = ordered.Spec.Containers[0].Image
	}
	h.apply(ordered)

	failing := busyPod("init-fails", v1.RestartPolicyNever, sh("app", "echo app; sleep 3600"))
	failing.Spec.InitContainers = []v1.Container{sh("ok", "exit 0"), sh("bad", "exit 7"), sh("never", "exit 0")}
	for i := range failing.Spec.InitContainers {
		failing.Spec.InitContainers[i].Image = failing.Spec.Containers[0].Image
	}
	h.apply(failing)

	pod := h.waitPod("ordered", 90*time.Second, "running", running)
	// The runtime plugin reports an exit from containerd's event, before
	// CRI shows it (plugins/runtime-containerd/exits.go): the host may
	// start the next container while CRI still lists the init container
	// running. Judge the order once CRI shows every init container's end.
	byName := map[string]*runtimeapi.ContainerStatus{}
	poll(t, 30*time.Second, func() bool {
		clear(byName)
		for _, c := range h.criContainers(string(pod.UID)) {
			byName[c.Metadata.Name] = c
		}
		for _, ic := range ordered.Spec.InitContainers {
			if c := byName[ic.Name]; c == nil || c.FinishedAt == 0 {
				return false
			}
		}
		return true
	}, func() string { return fmt.Sprintf("CRI does not show the end of every init container: %v", byName) })
	order := []string{"first", "second", "third", "app"}
	for i, name := range order {
		c := byName[name]
		if c == nil || c.StartedAt == 0 {
			t.Fatalf("container %s not started: %+v", name, c)
		}
		if i == 0 {
			continue
		}
		prev := byName[order[i-1]]
		if prev.FinishedAt == 0 || prev.ExitCode != 0 || c.StartedAt < prev.FinishedAt {
			t.Errorf("%s started at %s, before %s finished (%s, exit %d)", name,
				time.Unix(0, c.StartedAt).Format(time.StampMilli), prev.Metadata.Name, time.Unix(0, prev.FinishedAt).Format(time.StampMilli), prev.ExitCode)
		}
	}
	for _, st := range pod.Status.InitContainerStatuses {
		if st.State.Terminated == nil || st.State.Terminated.ExitCode != 0 {
			t.Errorf("init container %s status %+v; want terminated with 0", st.Name, st.State)
		}
	}

	bad := h.waitPhase("init-fails", v1.PodFailed, 90*time.Second)
	if st := containerStatus(bad, "bad"); st == nil || st.State.Terminated == nil || st.State.Terminated.ExitCode != 7 {
		t.Errorf("init container bad: %+v; want terminated with exit code 7", st)
	}
	for _, c := range h.criContainers(string(bad.UID)) {
		if c.Metadata.Name == "app" || c.Metadata.Name == "never" {
			t.Errorf("container %s was created after init container bad failed", c.Metadata.Name)
		}
	}
}
