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
)

// Events receives the user-facing events of the volume manager, for the
// pod they concern. It must not block. Unmount failures give no event.
type Events interface {
	Event(pod types.UID, eventType, reason, message string)
}

// opEvent is the event for the result of a mount operation of pod uid, in
// the kubelet's wording; ok is false when there is none.
func opEvent(op Op, err error) (eventType, reason, message string, ok bool) {
	step := map[OpKind]string{
		OpStage:   "MountVolume.MountDevice",
		OpPublish: "MountVolume.SetUp",
		OpMap:     "MapVolume.MapPodDevice",
	}[op.Kind]
	if op.Kind == OpStage && op.Volume.Block {
		step = "MapVolume.SetUpDevice"
	}
	if step == "" {
		return "", "", "", false
	}
	name := op.Name
	if op.Volume.PV != "" {
		name = op.Volume.PV
	}
	if name == "" {
		name = string(op.Volume.ID)
	}
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

// reconstructEvent is the event for a failed reconstruction of a pod's
// volume directory.
func reconstructEvent(e *ReconstructError) (eventType, reason, message string) {
	return "Warning", ReasonFailedReconstructVolume, fmt.Sprintf(
		"reconstruction of volume %q (%s) after the host restart failed; the volume stays in use and is retried: %v",
		e.Dir.Name, e.Dir.Plugin, e.Err)
}
