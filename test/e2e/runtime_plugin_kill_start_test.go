package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podhost/podhost/host/localapi"
	"github.com/podhost/podhost/host/runtimemanager"
)

// TestRuntimePluginKilledDuringStarts SIGKILLs the runtime plugin while
// pods are being created, until a kill has cut a StartContainer short
// (containerd then leaves the container exited 128, StartError): a plugin
// restart is not a pod restart. Every pod, Never ones too, runs with
// restart count 0 and no back-off, with one container at attempt 0.
func TestRuntimePluginKilledDuringStarts(t *testing.T) {
	const minKills, maxKills, maxPods = 2, 6, 60
	h := startPodHost(t)
	ctx := t.Context()

	// Pods arrive one every 50 ms until the kills are done, alternately
	// Never and Always.
	var (
		mu       sync.Mutex
		applied  []string
		applyErr error
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range maxPods {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			policy := v1.RestartPolicyAlways
			if i%2 == 0 {
				policy = v1.RestartPolicyNever
			}
			name := fmt.Sprintf("k%02d", i)
			b, err := json.Marshal(busyPod(name, policy, sh("app", "while true; do sleep 1; done")))
			if err == nil {
				_, err = h.client.Apply(ctx, b)
			}
			mu.Lock()
			if err != nil && applyErr == nil {
				applyErr = fmt.Errorf("apply %s: %w", name, err)
			}
			applied = append(applied, name)
			mu.Unlock()
		}
	})
	managed := map[string]string{runtimemanager.LabelManagedBy: runtimemanager.ManagedByValue}
	containers := func() int {
		list, err := h.ctrd.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: managed}})
		if err != nil {
			return 0
		}
		return len(list.Containers)
	}
	kills := 0
	for kills < minKills || kills < maxKills && cutStarts(t, h) == 0 {
		p := h.waitPlugin(func(p localapi.PluginInfo) bool { return p.Ready && p.PID != 0 })
		// Kill while containers are being made.
		base := containers()
		poll(t, 60*time.Second, func() bool { return containers() >= base+3 }, func() string { return "no containers being created\n" + h.logTail() })
		if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
			t.Fatalf("kill runtime plugin (pid %d): %v", p.PID, err)
		}
		kills++
		h.waitPlugin(func(q localapi.PluginInfo) bool { return q.Ready && q.PID != p.PID && q.PID != 0 })
	}
	close(stop)
	wg.Wait()
	if applyErr != nil {
		t.Fatal(applyErr)
	}
	cut := cutStarts(t, h)
	t.Logf("%d pods, %d plugin kills, %d container starts cut short", len(applied), kills, cut)
	if cut == 0 {
		t.Fatalf("no kill of %d cut a StartContainer short: the test did not exercise the case\n%s", kills, h.logTail())
	}

	// Every pod runs, none restarted, none failed.
	settled := func() bool {
		pods, err := h.client.Pods(ctx)
		if err != nil {
			return false
		}
		n := 0
		for _, p := range pods {
			if p.Phase == string(v1.PodFailed) || p.Phase == string(v1.PodSucceeded) || p.Restarts > 0 {
				d, _ := h.client.Pod(ctx, "default", p.Name)
				t.Fatalf("pod %s after the plugin kills: phase %s, %d restarts; want running, no restart\nstatus %s\nruntime: %s\nevents:\n%s%s",
					p.Name, p.Phase, p.Restarts, podStatusString(d.Pod), h.criSummary(d.Pod), eventsString(h.events(p.Name)), h.logTail())
			}
			if p.Phase == string(v1.PodRunning) && p.ReadyContainers == 1 {
				n++
			}
		}
		return n == len(applied)
	}
	poll(t, 4*time.Minute, settled, func() string { return fmt.Sprintf("not all %d pods running\n%s", len(applied), h.logTail()) })
	for _, name := range applied {
		if evs := h.events(name); hasEvent(evs, runtimemanager.EventBackOff, "") {
			t.Errorf("pod %s has a BackOff event:\n%s", name, eventsString(evs))
		}
	}
	cs, err := criContainerStatuses(ctx, h.ctrd, managed)
	if err != nil {
		t.Fatal(err)
	}
	perPod := map[string]int{}
	for _, c := range cs {
		name := c.Labels[runtimemanager.LabelPodName]
		perPod[name]++
		if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING || c.Metadata.Attempt != 0 {
			t.Errorf("pod %s: container %s is %s at attempt %d (exit %d %s); want running at attempt 0", name, c.Id, c.State, c.Metadata.Attempt, c.ExitCode, c.Reason)
		}
	}
	for _, name := range applied {
		if perPod[name] != 1 {
			t.Errorf("pod %s has %d containers in containerd; want 1", name, perPod[name])
		}
	}
}

// cutStarts counts the StartContainer calls the host logged as failed
// because the plugin exited under them.
func cutStarts(t *testing.T, h *podHost) int {
	t.Helper()
	h.mu.Lock()
	path := h.logs[len(h.logs)-1]
	h.mu.Unlock()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "starting container failed") && strings.Contains(line, "plugin exited") {
			n++
		}
	}
	return n
}
