package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podhost/podhost/host/localapi"
)

// callsSince are the driver's node calls after the first skip.
func (d *loopDriverProc) callsSince(t *testing.T, skip int) string {
	c := d.calls(t)
	if skip > len(c) {
		skip = len(c)
	}
	return strings.Join(c[skip:], ",")
}

// TestVolumesCSIStageTimesOut: NodeStageVolume hangs past volume-csi's
// deadline of 1 s. The pod gets FailedMount in the kubelet's wording and
// stays ContainerCreating, retry after retry; once the fault is cleared
// the volume is staged once and the pod runs.
func TestVolumesCSIStageTimesOut(t *testing.T) {
	d := startLoopDriverWith(t, "faults:\n- {rpc: NodeStageVolume, action: hang}\n")
	handle := d.createVolume(t, "slow")
	h := csiHost(t, "1s", loopDriver+"="+d.endpoint)
	h.writeClaim("slow", loopDriver, handle)
	h.apply(claimsPod("slow", "exec sleep 3600", "slow"))
	poll(t, 60*time.Second, func() bool {
		for _, e := range h.events("slow") {
			if e.Reason == "FailedMount" && strings.HasPrefix(e.Message, `MountVolume.MountDevice failed for volume "slow-pv" : `) &&
				strings.Contains(e.Message, "DeadlineExceeded") {
				return true
			}
		}
		return false
	}, func() string {
		return "no FailedMount for the stage timeout; events:\n" + eventsString(h.events("slow")) + h.logTail()
	})
	d.waitFaults(t, "NodeStageVolume", 2) // retried, still failing
	if p, ok := h.get("slow"); !ok || !containerWaiting(p) || len(h.criContainers(string(p.UID))) != 0 {
		t.Errorf("pod %s; want Pending, ContainerCreating, no container", podStatusString(p))
	}
	if c := d.calls(t); strings.Contains(strings.Join(c, ","), "NodePublishVolume") {
		t.Errorf("published while the stage fails: %q", c)
	}

	d.setFaults(t, "")
	h.waitPod("slow", 90*time.Second, "running", running)
	staging := h.stagingPath(loopDriver, handle)
	if n := mountCount(t, staging); n != 1 {
		t.Errorf("%d mounts on the staging path; want one", n)
	}
	calls := strings.Join(d.calls(t), ",")
	if !strings.HasSuffix(calls, "NodeStageVolume OK,NodePublishVolume OK") {
		t.Errorf("driver calls %s; want failed stages, then one stage and one publish", calls)
	}
	zero := int64(0)
	h.delete("slow", &zero)
	h.waitGone("slow", 60*time.Second)
	poll(t, 30*time.Second, func() bool {
		return strings.HasSuffix(strings.Join(d.calls(t), ","), "NodeUnpublishVolume OK,NodeUnstageVolume OK")
	},
		func() string { return fmt.Sprintf("driver calls %q; want unpublish and unstage last", d.calls(t)) })
	if n, loops := mountsBelow(t, h.root), d.loopDevices(); n != 0 || loops != 0 {
		t.Errorf("after delete: %d mounts below the root, %d loop devices; want none", n, loops)
	}
}

// TestVolumesCSIUnstageFails: NodeUnstageVolume fails (INTERNAL) after
// the first pod is deleted. The device stays staged (the mount table and
// the loop device say so); the next pod stages it again, finds it staged
// and runs, with one staging mount; after that pod the unstage keeps
// failing until the fault is cleared, then the device is unstaged.
func TestVolumesCSIUnstageFails(t *testing.T) {
	d := startLoopDriverWith(t, "faults:\n- {rpc: NodeUnstageVolume, action: fail, code: Internal}\n")
	handle := d.createVolume(t, "sticky")
	h := csiHost(t, "", loopDriver+"="+d.endpoint)
	h.writeClaim("sticky", loopDriver, handle)
	staging := h.stagingPath(loopDriver, handle)
	zero := int64(0)

	h.apply(claimsPod("first", "echo from-first > /sticky/f; sync; exec sleep 3600", "sticky"))
	h.waitPod("first", 90*time.Second, "running", running)
	h.delete("first", &zero)
	h.waitGone("first", 60*time.Second)
	poll(t, 30*time.Second, func() bool { return strings.Contains(strings.Join(d.calls(t), ","), "NodeUnstageVolume Internal") },
		func() string { return fmt.Sprintf("driver calls %q; want a failed unstage", d.calls(t)) })
	if n, loops := mountCount(t, staging), d.loopDevices(); n != 1 || loops != 1 {
		t.Errorf("after the failed unstage: %d staging mounts, %d loop devices; want the device still staged (1, 1)", n, loops)
	}

	seen := len(d.calls(t))
	h.apply(claimsPod("second", "cat /sticky/f; exec sleep 3600", "sticky"))
	h.waitPod("second", 90*time.Second, "running", running)
	h.waitLog("second", "main", "from-first")
	// The device was uncertain: staged again (the driver finds it staged)
	// before the publish; failed unstages may come first.
	if got := strings.ReplaceAll(d.callsSince(t, seen), "NodeUnstageVolume Internal,", ""); got != "NodeStageVolume OK,NodePublishVolume OK" {
		t.Errorf("driver calls for the second pod %q; want a stage, then a publish", got)
	}
	if n, loops := mountCount(t, staging), d.loopDevices(); n != 1 || loops != 1 {
		t.Errorf("second pod running: %d staging mounts, %d loop devices; want one of each", n, loops)
	}

	seen = len(d.calls(t))
	h.delete("second", &zero)
	h.waitGone("second", 60*time.Second)
	poll(t, 30*time.Second, func() bool { return strings.Contains(d.callsSince(t, seen), "NodeUnstageVolume Internal") },
		func() string { return fmt.Sprintf("driver calls %q; want the unstage to fail again", d.calls(t)) })
	if n := mountCount(t, staging); n != 1 {
		t.Errorf("%d staging mounts while the unstage fails; want 1", n)
	}
	d.setFaults(t, "")
	poll(t, 3*time.Minute, func() bool { return strings.HasSuffix(strings.Join(d.calls(t), ","), "NodeUnstageVolume OK") },
		func() string { return fmt.Sprintf("driver calls %q; want the unstage to succeed", d.calls(t)) })
	poll(t, 10*time.Second, func() bool { return mountsBelow(t, h.root) == 0 && d.loopDevices() == 0 },
		func() string {
			return fmt.Sprintf("after the unstage: %d mounts below the root, %d loop devices", mountsBelow(t, h.root), d.loopDevices())
		})
}

// TestVolumesCSIPluginKilledMidStage: volume-csi is SIGKILLed while the
// driver is in the middle of a slow NodeStageVolume (which finishes all
// the same). The supervisor restarts the plugin, the stage counts as
// uncertain and is made again, and the pod runs with exactly one staging
// mount; after the pod is deleted nothing is left mounted or attached.
func TestVolumesCSIPluginKilledMidStage(t *testing.T) {
	d := startLoopDriverWith(t, "faults:\n- {rpc: NodeStageVolume, action: delay, delay: 4s, times: 1}\n")
	handle := d.createVolume(t, "killed")
	h := csiHost(t, "", loopDriver+"="+d.endpoint)
	h.writeClaim("killed", loopDriver, handle)
	before, ok := h.namedPlugin("csi")
	if !ok || before.PID == 0 {
		t.Fatalf("volume-csi plugin: %+v", before)
	}
	h.apply(claimsPod("killed", "exec sleep 3600", "killed"))
	d.waitFaults(t, "NodeStageVolume", 1) // the stage is in the driver
	if err := syscall.Kill(before.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill volume-csi (pid %d): %v", before.PID, err)
	}
	var after localapi.PluginInfo
	poll(t, 60*time.Second, func() bool {
		after, ok = h.namedPlugin("csi")
		return ok && after.Ready && after.Restarts >= 1 && after.PID != before.PID && after.PID != 0
	}, func() string { return fmt.Sprintf("volume-csi after the kill: %+v\n%s", after, h.logTail()) })
	h.waitPod("killed", 90*time.Second, "running", running)
	// The killed plugin's stage ends in the driver after its delay.
	poll(t, 30*time.Second, func() bool { return strings.Count(strings.Join(d.calls(t), ","), "NodeStageVolume") >= 2 },
		func() string {
			return fmt.Sprintf("driver calls %q; want the killed stage and a stage again", d.calls(t))
		})
	if o := d.overlappingCalls(t); o != "" {
		t.Errorf("the driver ran two calls of one volume at once: %s", o)
	}
	staging := h.stagingPath(loopDriver, handle)
	if n, loops := mountCount(t, staging), d.loopDevices(); n != 1 || loops != 1 {
		t.Errorf("pod running: %d staging mounts, %d loop devices; want one of each", n, loops)
	}
	calls := strings.Join(d.calls(t), ",")
	if strings.Count(calls, "NodeStageVolume OK") < 2 || !strings.Contains(calls, "NodePublishVolume OK") {
		t.Errorf("driver calls %s; want the killed stage and a stage again done, and the publish", calls)
	}
	zero := int64(0)
	h.delete("killed", &zero)
	h.waitGone("killed", 60*time.Second)
	poll(t, 30*time.Second, func() bool {
		return strings.HasSuffix(strings.Join(d.calls(t), ","), "NodeUnstageVolume OK") && mountsBelow(t, h.root) == 0 && d.loopDevices() == 0
	}, func() string {
		return fmt.Sprintf("driver calls %q, %d mounts below the root, %d loop devices; want unstaged, nothing left", d.calls(t), mountsBelow(t, h.root), d.loopDevices())
	})
}

// overlappingCalls names two successful node calls of one volume that
// ran at the same time (a CO may have one call in flight per volume; a
// driver refuses a second with ABORTED), or is empty.
func (d *loopDriverProc) overlappingCalls(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(d.callLog)
	if err != nil {
		t.Fatal(err)
	}
	type call struct {
		Start, End time.Time
		RPC, Code  string
		VolumeID   string `json:"volume_id"`
	}
	var calls []call
	for _, l := range strings.Split(string(b), "\n") {
		var c call
		if json.Unmarshal([]byte(l), &c) == nil && c.Code == "OK" && c.VolumeID != "" && strings.HasPrefix(c.RPC, "Node") && !strings.HasPrefix(c.RPC, "NodeGet") {
			calls = append(calls, c)
		}
	}
	for i, a := range calls {
		for _, b := range calls[i+1:] {
			if a.VolumeID == b.VolumeID && a.Start.Before(b.End) && b.Start.Before(a.End) {
				return fmt.Sprintf("%s [%s, %s] and %s [%s, %s]", a.RPC, a.Start.Format(time.StampMilli), a.End.Format(time.StampMilli),
					b.RPC, b.Start.Format(time.StampMilli), b.End.Format(time.StampMilli))
			}
		}
	}
	return ""
}
