package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/localapi"
)

// TestNodeDiskPressureEviction: with a nodefs.available threshold set just
// above what the root directory's filesystem has free (nothing is written
// to fill the disk), the host is under disk pressure and evicts one pod
// per period, the one with the most local storage first, as the kubelet
// ranks them: Failed, reason Evicted, the kubelet's message, and a
// Warning EvictionThresholdMet event on the node. The final status keeps
// the DisruptionTarget condition the eviction set.
func TestNodeDiskPressureEviction(t *testing.T) {
	h := startPodHost(t)
	const write = `dd if=/dev/zero of=/data/f bs=1M count=%d && sync && touch /done; trap "exit 0" TERM; while true; do sleep 1; done`
	for name, mib := range map[string]int{"big": 8, "small": 1} {
		p := withEmptyDir(busyPod(name, v1.RestartPolicyAlways, sh("app", fmt.Sprintf(write, mib))), "scratch", "", "")
		p.Spec.Containers[0].ReadinessProbe = &v1.Probe{PeriodSeconds: 1,
			ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"cat", "/done"}}}}
		h.apply(p)
	}
	for _, name := range []string{"big", "small"} {
		h.waitPod(name, 90*time.Second, "ready after writing", func(p *v1.Pod) bool {
			c := containerStatus(p, "app")
			return c != nil && c.Ready
		})
	}

	// The threshold is 8 GiB above what is free now: the node stays under
	// pressure whatever else the machine writes or frees meanwhile, short
	// of freeing more than 8 GiB.
	var st unix.Statfs_t
	if err := unix.Statfs(h.root, &st); err != nil {
		t.Fatal(err)
	}
	threshold := st.Bavail*uint64(st.Bsize) + 8<<30
	cfg, err := os.ReadFile(h.config)
	if err != nil {
		t.Fatal(err)
	}
	extra := fmt.Sprintf("evictionHard: {nodefs.available: \"%d\", imagefs.available: \"0%%\"}\n", threshold)
	// The harness turns disk pressure off; this test sets its own.
	cfg = regexp.MustCompile(`(?m)^evictionHard:.*\n`).ReplaceAll(cfg, nil)
	if err := os.WriteFile(h.config, append(cfg, extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	h.kill()
	h.start()

	const prefix = "The node was low on resource: ephemeral-storage. Threshold quantity: "
	seqs := map[string]uint64{}
	for _, name := range []string{"big", "small"} {
		p := h.waitPhase(name, v1.PodFailed, 120*time.Second)
		if p.Status.Reason != "Evicted" || !strings.HasPrefix(p.Status.Message, prefix) {
			t.Errorf("%s: reason %q message %q; want Evicted %q…", name, p.Status.Reason, p.Status.Message, prefix)
		}
		// Its emptyDir is torn down after the terminated pod's status was
		// generated: what the pod shows from then on is its final status.
		dir := h.emptyDirPath(string(p.UID), "scratch")
		poll(t, 60*time.Second, func() bool { _, err := os.Stat(dir); return os.IsNotExist(err) },
			func() string { return name + ": emptyDir " + dir + " still there" })
		if p, _ = h.get(name); p != nil {
			wantDisruptionTarget(t, p)
		}
		for _, e := range h.events(name) {
			if e.Reason == "Evicted" && strings.HasPrefix(e.Message, prefix) {
				seqs[name] = e.Seq
			}
		}
		if seqs[name] == 0 {
			t.Errorf("%s: no Evicted event:\n%s", name, eventsString(h.events(name)))
		}
	}
	if seqs["big"] > seqs["small"] {
		t.Errorf("small evicted (event %d) before big (event %d): the pod with the most local storage goes first", seqs["small"], seqs["big"])
	}
	nodeEvents, err := h.client.Events(t.Context(), localapi.EventFilter{Kind: "Node"})
	if err != nil {
		t.Fatal(err)
	}
	if !hasEvent(nodeEvents, "EvictionThresholdMet", "Attempting to reclaim ephemeral-storage") {
		t.Errorf("no EvictionThresholdMet event on the node:\n%s", eventsString(nodeEvents))
	}
}

// wantDisruptionTarget checks that the final status of a pod evicted for
// node pressure carries the kubelet's DisruptionTarget condition: True,
// reason TerminationByKubelet, the eviction's message.
func wantDisruptionTarget(t *testing.T, p *v1.Pod) {
	t.Helper()
	for _, c := range p.Status.Conditions {
		if c.Type != v1.DisruptionTarget {
			continue
		}
		if c.Status != v1.ConditionTrue || c.Reason != v1.PodReasonTerminationByKubelet || c.Message != p.Status.Message {
			t.Errorf("%s: DisruptionTarget %s, reason %q, message %q; want True, %s, %q",
				p.Name, c.Status, c.Reason, c.Message, v1.PodReasonTerminationByKubelet, p.Status.Message)
		}
		return
	}
	t.Errorf("%s: no DisruptionTarget condition in the final status: %v", p.Name, p.Status.Conditions)
}
