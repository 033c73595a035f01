package volumemanager

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// Event reasons, as the kubelet's.
const (
	ReasonFailedMount           = "FailedMount"
	ReasonFailedMapVolume       = "FailedMapVolume"
	ReasonSuccessfulMountVolume = "SuccessfulMountVolume"
	// ReasonFailedReconstructVolume: a pod volume directory found after a
	// host restart could not be rebuilt; the volume stays in use and the
	// host asks its plugin again with back-off.
	ReasonFailedReconstructVolume = "FailedReconstructVolume"
	// ReasonFailedUnmountDevice and ReasonFailedUnmapDevice: an unstage
	// failed, so the device stays uncertain (node events: no pod uses the
	// device any more).
	ReasonFailedUnmountDevice = "FailedUnmountDevice"
	ReasonFailedUnmapDevice   = "FailedUnmapDevice"
	// ReasonFailedUnmount: a pod's unpublish or unmap failed; the pod
	// stays Terminating until it succeeds.
	ReasonFailedUnmount = "FailedUnmount"
)

// Events receives the user-facing events of the volume manager, for the
// pod they concern, or for the node when pod is "" (a failed unstage).
// It must not block.
type Events interface {
	Event(pod types.UID, eventType, reason, message string)
}

// opEvent is the event for the result of a mount operation of pod uid, in
// the kubelet's wording, or of a failed unpublish, unmap or unstage; ok
// is false when there is none.
func opEvent(op Op, err error) (eventType, reason, message string, ok bool) {
	if op.Kind == OpUnstage {
		return unstageEvent(op, err)
	}
	if (op.Kind == OpUnpublish || op.Kind == OpUnmap) && err != nil {
		step := map[OpKind]string{OpUnpublish: "UnmountVolume.TearDown", OpUnmap: "UnmapVolume.UnmapPodDevice"}[op.Kind]
		return "Warning", ReasonFailedUnmount, fmt.Sprintf("%s failed for volume %q : %v", step, eventName(op), err), true
	}
	step := map[OpKind]string{
		OpStage:   "MountVolume.MountDevice",
		OpPublish: "MountVolume.SetUp",
		OpMap:     "MapVolume.MapPodDevice",
		// The volume is not attached yet (not an error of the node's).
		OpVerifyAttached: "MountVolume.WaitForAttach",
	}[op.Kind]
	switch {
	case op.Kind == OpStage && op.Volume.Block:
		step = "MapVolume.SetUpDevice"
	case op.Kind == OpVerifyAttached && op.Volume.Block:
		step = "MapVolume.WaitForAttach"
	}
	if step == "" {
		return "", "", "", false
	}
	name := eventName(op)
	switch {
	case err != nil && op.Volume.Block:
		return "Warning", ReasonFailedMapVolume, fmt.Sprintf("%s failed for volume %q : %v", step, name, err), true
	case err != nil:
		return "Warning", ReasonFailedMount, fmt.Sprintf("%s failed for volume %q : %v", step, name, err), true
	case op.Kind == OpMap:
		return "Normal", ReasonSuccessfulMountVolume, fmt.Sprintf("%s succeeded for volume %q", step, name), true
	}
	return "", "", "", false
}

// unstageEvent is the event of a failed unstage, none for a success.
func unstageEvent(op Op, err error) (eventType, reason, message string, ok bool) {
	if err == nil {
		return "", "", "", false
	}
	step, reason := "UnmountDevice", ReasonFailedUnmountDevice
	if op.Volume.Block {
		step, reason = "UnmapDevice", ReasonFailedUnmapDevice
	}
	return "Warning", reason, fmt.Sprintf("%s failed for volume %q : %v; the device stays uncertain: it is unmounted again, or staged again for the next pod",
		step, eventName(op), err), true
}

// eventName names op's volume in events: its PersistentVolume, else its
// spec name, else its ID.
func eventName(op Op) string {
	switch {
	case op.Volume.PV != "":
		return op.Volume.PV
	case op.Name != "":
		return op.Name
	}
	return string(op.Volume.ID)
}

// reconstructEvent is the event for a failed reconstruction of a pod's
// volume directory.
func reconstructEvent(e *ReconstructError) (eventType, reason, message string) {
	return "Warning", ReasonFailedReconstructVolume, fmt.Sprintf(
		"reconstruction of volume %q (%s) after the host restart failed; the volume stays in use and is retried: %v",
		e.Dir.Name, e.Dir.Plugin, e.Err)
}
