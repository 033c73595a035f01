package e2e

import (
	"fmt"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/runtimemanager"
)

// TestReliabilityRuntimePluginKilled runs 50 pods, then SIGKILLs the
// runtime plugin while pods are deleted and added: the host restarts the
// plugin, the containers keep running throughout (same IDs, same start
// times), and every desired pod converges with exactly one sandbox.
func TestReliabilityRuntimePluginKilled(t *testing.T) {
	const total, churn = 50, 10
	h := startPodHost(t)
	ctx := t.Context()
	name := func(prefix string, i int) string { return fmt.Sprintf("%s%02d", prefix, i) }
	for i := range total {
		h.apply(busyPod(name("p", i), v1.RestartPolicyAlways, sh("app", "while true; do sleep 1; done")))
	}
	allRunning := func(want map[string]bool) func() bool {
		return func() bool {
			pods, err := h.client.Pods(ctx)
			if err != nil {
				return false
			}
			n := 0
			for _, p := range pods {
				if want[p.Name] && p.Phase == string(v1.PodRunning) && p.ReadyContainers == 1 {
					n++
				}
			}
			return n == len(want)
		}
	}
	want := map[string]bool{}
	for i := range total {
		want[name("p", i)] = true
	}
	poll(t, 4*time.Minute, allRunning(want), func() string { return "not all 50 pods running\n" + h.logTail() })

	// The containers as containerd has them.
	snapshot := func() map[string]*runtimeapi.ContainerStatus {
		cs, err := criContainerStatuses(ctx, h.ctrd, map[string]string{runtimemanager.LabelManagedBy: runtimemanager.ManagedByValue})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*runtimeapi.ContainerStatus{}
		for _, c := range cs {
			out[c.Labels[runtimemanager.LabelPodName]+"/"+c.Id] = c
		}
		return out
	}
	before := map[string]*runtimeapi.ContainerStatus{} // pod name -> container
	for _, c := range snapshot() {
		before[c.Labels[runtimemanager.LabelPodName]] = c
	}
	if len(before) != total {
		t.Fatalf("%d pods with containers; want %d", len(before), total)
	}

	plugin, _ := h.plugin()
	if plugin.PID == 0 {
		t.Fatal("no runtime plugin PID")
	}
	// Churn in the background while the plugin dies.
	var wg sync.WaitGroup
	churnErrs := make(chan error, 2*churn)
	wg.Go(func() {
		for i := range churn {
			if _, err := h.client.Delete(ctx, "default", name("p", total-1-i), localapi.DeleteOptions{}); err != nil {
				churnErrs <- err
			}
			b := []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":"default"},
"spec":{"hostNetwork":true,"terminationGracePeriodSeconds":2,"containers":[{"name":"app","image":"podhost.local/busybox:1","imagePullPolicy":"Never","command":["sh","-c","while true; do sleep 1; done"]}]}}`, name("c", i)))
			if _, err := h.client.Apply(ctx, b); err != nil {
				churnErrs <- err
			}
		}
	})
	if err := syscall.Kill(plugin.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill runtime plugin (pid %d): %v", plugin.PID, err)
	}
	wg.Wait()
	close(churnErrs)
	for err := range churnErrs {
		t.Errorf("churn: %v", err)
	}
	restarted := h.waitPlugin(func(p localapi.PluginInfo) bool {
		return p.Ready && p.Restarts >= 1 && p.PID != plugin.PID && p.PID != 0
	})
	t.Logf("plugin restarted: pid %d -> %d, restarts %d", plugin.PID, restarted.PID, restarted.Restarts)

	for i := range churn {
		delete(want, name("p", total-1-i))
		want[name("c", i)] = true
	}
	poll(t, 4*time.Minute, allRunning(want), func() string { return "desired pods not all running after the plugin restart\n" + h.logTail() })
	for i := range churn {
		h.waitGone(name("p", total-1-i), 2*time.Minute)
	}

	// Every original pod that is still desired kept its container.
	after := snapshot()
	for podName, c := range before {
		if !want[podName] {
			continue
		}
		now, ok := after[podName+"/"+c.Id]
		switch {
		case !ok:
			t.Errorf("pod %s: container %s is gone", podName, c.Id)
		case now.State != runtimeapi.ContainerState_CONTAINER_RUNNING || now.StartedAt != c.StartedAt:
			t.Errorf("pod %s: container %s is %s, started at %d; want running, started at %d", podName, c.Id, now.State, now.StartedAt, c.StartedAt)
		}
	}
	perPod := map[string]int{}
	for _, c := range after {
		perPod[c.Labels[runtimemanager.LabelPodName]]++
	}
	// Exactly one sandbox, ready, per desired pod; none of deleted pods.
	poll(t, 2*time.Minute, func() bool {
		sbs, err := criSandboxes(ctx, h.ctrd, map[string]string{runtimemanager.LabelManagedBy: runtimemanager.ManagedByValue})
		if err != nil {
			return false
		}
		count := map[string]int{}
		for _, s := range sbs {
			if s.State == runtimeapi.PodSandboxState_SANDBOX_READY {
				count[s.Labels[runtimemanager.LabelPodName]]++
			}
		}
		for n := range want {
			if count[n] != 1 {
				return false
			}
		}
		return len(count) == len(want)
	}, func() string {
		sbs, _ := criSandboxes(ctx, h.ctrd, map[string]string{runtimemanager.LabelManagedBy: runtimemanager.ManagedByValue})
		var names []string
		for _, s := range sbs {
			names = append(names, s.Labels[runtimemanager.LabelPodName]+":"+s.State.String())
		}
		sort.Strings(names)
		return fmt.Sprintf("sandboxes not one ready per desired pod: %v", names)
	})
	sbs, err := criSandboxes(ctx, h.ctrd, map[string]string{runtimemanager.LabelManagedBy: runtimemanager.ManagedByValue})
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]int{}
	for _, s := range sbs {
		all[s.Labels[runtimemanager.LabelPodUID]]++
	}
	for uid, n := range all {
		if n > 1 {
			t.Errorf("pod UID %s has %d sandboxes; want one", uid, n)
		}
	}
	for n := range want {
		if perPod[n] != 1 {
			t.Errorf("pod %s has %d containers; want one", n, perPod[n])
		}
	}
	evs, err := h.client.Events(ctx, localapi.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasEvent(evs, "PluginExited", "plugin containerd") || !hasEvent(evs, "PluginRestarted", "plugin containerd") {
		t.Errorf("no PluginExited and PluginRestarted events of containerd:\n%s", eventsString(evs))
	}
}
