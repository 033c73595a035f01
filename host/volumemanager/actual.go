package volumemanager

import (
	"cmp"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// device is the actual state of one volume: its staging (for a shared
// volume) and the pods that have or may have it published.
type device struct {
	vol   Volume
	state MountState // always NotMounted for a volume that is not shared
	// reconstructed: the device state came from reconstruction; a final
	// stage error then keeps it uncertain (T5).
	reconstructed bool
	pods          map[types.UID]*podMount
	// attached: a volume with Attach was found attached (OpVerifyAttached)
	// with publishContext; forgotten with the device.
	attached       bool
	publishContext map[string]string
}

// podMount is the actual state of one (volume, pod) publish.
type podMount struct {
	name          string // the pod's spec.volumes name
	state         MountState
	reconstructed bool
}

// Record is the saved form of one volume's actual state.
type Record struct {
	Volume Volume
	Device MountState
	Pods   []PodRecord
	// Boot is the boot ID the record was saved in (Config.BootID).
	Boot string
}

// PodRecord is the saved form of one pod's publish of a volume.
type PodRecord struct {
	Pod   types.UID
	Name  string
	State MountState
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}
