package volumemanager

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// OpKind is the kind of a plugin operation. Stage and Unstage are device
// operations (MountDevice/UnmountDevice, or SetUpDevice/TearDownDevice for
// a block volume); the others are pod operations.
type OpKind int

const (
	OpStage OpKind = iota
	OpUnstage
	OpPublish   // filesystem SetUp
	OpUnpublish // filesystem TearDown
	OpMap       // block MapPodDevice
	OpUnmap     // block UnmapPodDevice
	// OpReconstruct asks the plugin again about the pod volume directory
	// of an unresolved placeholder (Reconstructor); it changes nothing on
	// the node, and its answer goes to Reconciler.Resolve.
	OpReconstruct
	// OpVerifyAttached asks Attachments whether a volume with Attach is
	// attached to the node, and for its publish context; it changes
	// nothing on the node, and its answer goes to Reconciler.Attached.
	OpVerifyAttached
)

var opNames = [...]string{"stage", "unstage", "publish", "unpublish", "map", "unmap", "reconstruct", "verify-attached"}

func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// Op is one operation the reconciler asks the driver to run. Pod and Name
// are empty for device operations; Args are the pod's mount arguments,
// for a publish.
type Op struct {
	Kind   OpKind
	Volume Volume
	Pod    types.UID
	Name   string
	Args   MountArgs
	seq    uint64 // tells a current completion from a stale one
}

// Dir is the pod volume directory of a pod operation.
func (o Op) Dir() PodVolumeDir {
	return PodVolumeDir{Pod: o.Pod, Plugin: o.Volume.Plugin, Name: o.Name, Block: o.Volume.Block}
}

func (o Op) String() string {
	if o.Pod == "" {
		return fmt.Sprintf("%s %s", o.Kind, o.Volume.ID)
	}
	return fmt.Sprintf("%s %s pod=%s name=%s", o.Kind, o.Volume.ID, o.Pod, o.Name)
}

// mountKinds are the kinds that may leave something mounted.
func (k OpKind) mounts() bool { return k == OpStage || k == OpPublish || k == OpMap }

func publishKind(v Volume) OpKind {
	if v.Block {
		return OpMap
	}
	return OpPublish
}

func unpublishKind(v Volume) OpKind {
	if v.Block {
		return OpUnmap
	}
	return OpUnpublish
}

// opKey names an operation for back-off: kind, volume and pod.
type opKey struct {
	kind OpKind
	vol  VolumeID
	pod  types.UID
}

func (o Op) key() opKey { return opKey{o.Kind, o.Volume.ID, o.Pod} }

// Back-off per operation, as the kubelet's exponential back-off.
const (
	InitialBackoff = 500 * time.Millisecond
	MaxBackoff     = 2*time.Minute + 2*time.Second
)

type backoff struct {
	wait    time.Duration
	retryAt time.Time
}

// failed is the back-off after one more failure at now.
func (b backoff) failed(now time.Time) backoff {
	switch {
	case b.wait == 0:
		b.wait = InitialBackoff
	case b.wait*2 > MaxBackoff:
		b.wait = MaxBackoff
	default:
		b.wait *= 2
	}
	b.retryAt = now.Add(b.wait)
	return b
}
