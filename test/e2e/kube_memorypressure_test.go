package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podhost/podhost/host/localapi"
)

// memoryAvailable is the node's memory.available as the host computes it
// (host/node's pressure signals from host/nodestats): MemTotal less the
// working set, the memory in use less the inactive file cache, which
// comes to MemFree plus Inactive(file).
func memoryAvailable(t *testing.T) uint64 {
	t.Helper()
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var free, inactive uint64
	seen := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		var dst *uint64
		switch fields[0] {
		case "MemFree:":
			dst = &free
		case "Inactive(file):":
			dst = &inactive
		default:
			continue
		}
		kb, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			t.Fatalf("/proc/meminfo %s: %v", fields[0], err)
		}
		*dst = kb << 10
		seen++
	}
	if seen != 2 {
		t.Fatalf("/proc/meminfo: MemFree or Inactive(file) missing")
	}
	return free + inactive
}

// nodeCondition is the status of the Node's condition of type typ.
func (k *kubeHost) nodeCondition(typ v1.NodeConditionType) v1.ConditionStatus {
	k.t.Helper()
	n, err := k.cluster.Client.CoreV1().Nodes().Get(k.t.Context(), kubeNode, metav1.GetOptions{})
	if err != nil {
		return v1.ConditionUnknown
	}
	for _, c := range n.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return v1.ConditionUnknown
}

// waitNodeCondition waits until the Node's condition typ has status want.
func (k *kubeHost) waitNodeCondition(typ v1.NodeConditionType, want v1.ConditionStatus, limit time.Duration) {
	k.t.Helper()
	var last v1.ConditionStatus
	poll(k.t, limit, func() bool { last = k.nodeCondition(typ); return last == want },
		func() string {
			return fmt.Sprintf("node %s: %s is %s, want %s\n%s", kubeNode, typ, last, want, k.logTail())
		})
}

// TestKubeNodeMemoryPressureEviction: with memory.available's threshold
// set 3 GiB below what the machine has available when the test starts, a
// hog that fills a Memory emptyDir (tmpfs, charged to its container) in
// 64 MiB steps, and holds it, takes the node below it: the Node's
// MemoryPressure goes True, the hog is evicted as the kubelet evicts it
// (Failed, reason Evicted, the kubelet's message naming memory and the
// hog's use over its request of 0, the DisruptionTarget condition in the
// final status), and MemoryPressure goes back to False after the
// transition period. The other pod, whose use stays under its memory
// request, ranks after the hog and keeps running: once the hog is
// cleaned up the node is above the threshold again.
//
// The machine is shared, so the margins are wide both ways: other
// processes may take up to 3 GiB until the pressure is over (the hog, over
// its request from its first write, would still be the one evicted) and
// free up to 1 GiB while it grows (it grows to 4 GiB, the margin plus
// 1 GiB). memory.available counts the active page cache as used, as the
// kubelet's does, and on a busy machine that moves by gigabytes a minute:
// past 3 GiB the node stays under pressure without the hog, and the keeper
// is evicted next, as the kubelet would evict it.
func TestKubeNodeMemoryPressureEviction(t *testing.T) {
	const (
		margin = 3 << 30
		step   = 64 // MiB
	)
	k := startKubeHost(t)
	k.waitNodeReady(time.Minute)
	trigger := t.TempDir()
	dirType := v1.HostPathDirectory
	hog := kubePod("hog", v1.RestartPolicyAlways, sh("hog", fmt.Sprintf(`trap "exit 0" TERM
dd if=/dev/zero of=/mem/base bs=1M count=8 2>/dev/null
until [ -e /trigger/go ]; do sleep 0.2; done
i=0
while [ $i -lt %d ]; do dd if=/dev/zero of=/mem/f$i bs=1M count=%d 2>/dev/null || break; i=$((i+1)); sleep 0.1; done
while true; do sleep 1; done`, ((margin+1<<30)>>20)/step, step)))
	hog.Spec.Volumes = []v1.Volume{
		volume("mem", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}),
		volume("trigger", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: trigger, Type: &dirType}}),
	}
	hog.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "mem", MountPath: "/mem"}, {Name: "trigger", MountPath: "/trigger"}}
	keeper := kubePod("keeper", v1.RestartPolicyAlways, sh("app", `trap "exit 0" TERM; while true; do sleep 1; done`))
	keeper.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}
	k.create(hog)
	k.create(keeper)
	k.waitAPIRunning("hog", 2*time.Minute)
	k.waitAPIRunning("keeper", 2*time.Minute)

	// The threshold, measured now, replaces the harness's evictionHard
	// line; the host restarts with it (the pods keep running).
	threshold := memoryAvailable(t) - margin
	cfg, err := os.ReadFile(k.config)
	if err != nil {
		t.Fatal(err)
	}
	cfg = regexp.MustCompile(`(?m)^evictionHard:.*\n`).ReplaceAll(cfg, nil)
	cfg = fmt.Appendf(cfg, "evictionHard: {memory.available: \"%d\", nodefs.available: \"0%%\", nodefs.inodesFree: \"0%%\", imagefs.available: \"0%%\"}\n"+
		"evictionPressureTransitionPeriod: 15s\n", threshold)
	if err := os.WriteFile(k.config, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	k.kill()
	k.start()
	k.waitNodeReady(time.Minute)

	if err := os.WriteFile(filepath.Join(trigger, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	k.waitNodeCondition(v1.NodeMemoryPressure, v1.ConditionTrue, 2*time.Minute)
	p := k.waitAPIPod("hog", 2*time.Minute, "Failed and its containers terminated", func(p *v1.Pod) bool {
		c := containerStatus(p, "hog")
		return p.Status.Phase == v1.PodFailed && c != nil && c.State.Terminated != nil
	})
	const prefix = "The node was low on resource: memory. Threshold quantity: "
	if p.Status.Reason != "Evicted" || !strings.HasPrefix(p.Status.Message, prefix) ||
		!regexp.MustCompile(`Container hog was using \S+, request is 0, has larger consumption of memory\. $`).MatchString(p.Status.Message) {
		t.Errorf("hog: reason %q message %q; want Evicted, %q… naming the hog's use over its request", p.Status.Reason, p.Status.Message, prefix)
	}
	// The DisruptionTarget condition reaches the API with the terminal
	// phase and stays in the final status.
	k.waitAPIPod("hog", time.Minute, "DisruptionTarget in its status", func(p *v1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == v1.DisruptionTarget {
				return true
			}
		}
		return false
	})
	if p, ok := k.apiPod("hog"); ok {
		wantDisruptionTarget(t, p)
	}

	// After the transition period without pressure, MemoryPressure is
	// False again; the keeper ran through it all.
	k.waitNodeCondition(v1.NodeMemoryPressure, v1.ConditionFalse, 3*time.Minute)
	kp, _ := k.apiPod("keeper")
	if c := containerStatus(kp, "app"); kp.Status.Phase != v1.PodRunning || c == nil || c.State.Running == nil || c.RestartCount != 0 {
		t.Errorf("keeper: phase %s, status %+v; want it running, never restarted", kp.Status.Phase, c)
	}
	if evs := k.events("keeper"); hasEvent(evs, "Evicted", "") {
		t.Errorf("keeper was evicted:\n%s", eventsString(evs))
	}
	if !hasEvent(k.events("hog"), "Evicted", prefix) {
		t.Errorf("no Evicted event for the hog:\n%s", eventsString(k.events("hog")))
	}
	nodeEvents, err := k.client.Events(t.Context(), localapi.EventFilter{Kind: "Node"})
	if err != nil {
		t.Fatal(err)
	}
	if !hasEvent(nodeEvents, "EvictionThresholdMet", "Attempting to reclaim memory") {
		t.Errorf("no EvictionThresholdMet event on the node:\n%s", eventsString(nodeEvents))
	}
}
