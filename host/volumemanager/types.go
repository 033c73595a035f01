package volumemanager

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Plugin names, as the kubelet names its volume plugins.
const (
	PluginCSI      = "kubernetes.io/csi"
	PluginFC       = "kubernetes.io/fc"
	PluginISCSI    = "kubernetes.io/iscsi"
	PluginEmptyDir = "kubernetes.io/empty-dir"
	PluginHostPath = "kubernetes.io/host-path"
	// The volumes whose files come from the API server
	// (host/volumemanager/apivolumes); configMap, secret and downwardAPI
	// volumes are a projected volume of one source. The downward API's
	// files come from the pod itself, so its volumes need no API server.
	PluginProjected   = "kubernetes.io/projected"
	PluginConfigMap   = "kubernetes.io/configmap"
	PluginSecret      = "kubernetes.io/secret"
	PluginDownwardAPI = "kubernetes.io/downward-api"
)

// VolumeID is the unique name of a volume on the node: "<plugin>/<name>"
// where name is the device's identity for a shared volume (CSI
// "<driver>^<handle>", FC "[wwn…]:<lun>", iSCSI "<portal>:<iqn>:<lun>")
// and "<pod UID>-<spec name>" for a volume private to one pod.
type VolumeID string

// Volume is what a plugin needs to stage, publish or clean up a volume.
// Exactly one source pointer is set, except for a volume found on disk
// whose reconstruction failed (Unresolved), which has none.
type Volume struct {
	ID     VolumeID
	Plugin string
	// Shared volumes are staged once per node (Stage/Unstage) and then
	// published per pod; the others are only published.
	Shared   bool
	Block    bool
	ReadOnly bool
	// PV is the PersistentVolume name, empty for inline volumes.
	PV string
	// MountOptions are the PersistentVolume's spec.mountOptions, with
	// which the plugin mounts the device (a filesystem volume's stage).
	MountOptions []string
	// AccessModes are the PersistentVolume's spec.accessModes, by which a
	// CSI driver's default fsGroupPolicy decides whether the volume is
	// given to a pod's fsGroup; none for inline volumes.
	AccessModes []v1.PersistentVolumeAccessMode
	// Unresolved marks a placeholder for a pod volume directory whose
	// plugin could not reconstruct it: it may only be unpublished.
	Unresolved bool
	// Attach says the cluster attaches the volume to the node (a CSI
	// driver that needs ControllerPublishVolume, through the attach/detach
	// controller): it is staged and published only once it was reported
	// in use and its attachment was found (Attachments, attach.go).
	Attach bool
	// PublishContext is what the attachment returned (a CSI
	// VolumeAttachment's status.attachmentMetadata), given to the stage
	// and publish of a volume with Attach; empty otherwise.
	PublishContext map[string]string
	// ForPod is the pod whose spec gave this Volume (DesiredVolumes): the
	// Secrets its CSI source names (nodeStageSecretRef,
	// nodePublishSecretRef) are read where that pod's objects are, the
	// API server for a pod of the API server's, the host's sources for
	// any other. Each pod's desired Volume names its own pod; a shared
	// volume is staged with the Volume of the first pod that needs it.
	// Empty for a volume no desired pod gave (reconstructed, recorded).
	ForPod types.UID

	CSI      *v1.CSIPersistentVolumeSource
	FC       *v1.FCVolumeSource
	ISCSI    *v1.ISCSIPersistentVolumeSource
	EmptyDir *v1.EmptyDirVolumeSource
	HostPath *v1.HostPathVolumeSource
	// Projected holds the sources of projected, configMap, secret and
	// downwardAPI volumes.
	Projected *v1.ProjectedVolumeSource
}

// PodVolume is one volume of one pod: Name is the pod's spec.volumes name.
// Claim is the PersistentVolumeClaim the volume comes from (the pod's
// namespace and the claim's name), zero for a volume that is not a claim.
type PodVolume struct {
	Pod    types.UID
	Name   string
	Claim  types.NamespacedName
	Volume Volume
	Args   MountArgs
}

// MountArgs are the pod's arguments to the set-up (publish) of each of its
// volumes, the kubelet's MounterArgs: the pod's securityContext.fsGroup
// and fsGroupChangePolicy, nil when the pod sets none, and the pod itself. Every volume of the
// pod carries them; the set-up code of each volume kind decides whether
// the kind honours them (emptyDir, projected, configMap and secret
// volumes always, CSI by the driver's fsGroupPolicy, hostPath never).
type MountArgs struct {
	FSGroup             *int64
	FSGroupChangePolicy *v1.PodFSGroupChangePolicy
	// Pod is who the volume is published for, which a CSI driver that
	// asks for it (CSIDriver podInfoOnMount) is told.
	Pod PodInfo
}

// PodInfo is the pod a volume is published for.
type PodInfo struct {
	Name, Namespace, ServiceAccount string
	UID                             types.UID
}

// PodMountArgs are the mount arguments of pod.
func PodMountArgs(pod *v1.Pod) MountArgs {
	args := MountArgs{Pod: PodInfo{Name: pod.Name, Namespace: pod.Namespace, ServiceAccount: pod.Spec.ServiceAccountName, UID: pod.UID}}
	if sc := pod.Spec.SecurityContext; sc != nil {
		args.FSGroup, args.FSGroupChangePolicy = sc.FSGroup, sc.FSGroupChangePolicy
	}
	return args
}

// MountState is the state of a device (staged) or a pod mount
// (published): a mount attempt that may have left something behind is
// Uncertain, and Uncertain is treated as "may be mounted" by every cleanup.
type MountState int

const (
	NotMounted MountState = iota
	Uncertain
	Mounted
)

func (s MountState) String() string {
	switch s {
	case NotMounted:
		return "notMounted"
	case Uncertain:
		return "uncertain"
	case Mounted:
		return "mounted"
	}
	return fmt.Sprintf("MountState(%d)", int(s))
}

// Class is the class of an operation's error: final, uncertain or
// transient, as the kubelet classifies a volume operation's error.
type Class int

const (
	// Final: the call finished and failed; it left nothing mounted.
	Final Class = iota
	// UncertainError: the call may still progress, or half succeeded.
	UncertainError
	// Transient: the call never reached the plugin; nothing changed.
	Transient
)

func (c Class) String() string {
	switch c {
	case Final:
		return "final"
	case UncertainError:
		return "uncertain"
	case Transient:
		return "transient"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Classifier decides the class of a non-nil plugin error. The wire
// adapters implement it: Canceled, DeadlineExceeded, Unavailable,
// ResourceExhausted, Aborted and errors without a gRPC status are
// uncertain, as is a plugin that died mid-call; a call that never reached
// the plugin is transient; every other status is final.
type Classifier interface {
	Classify(err error) Class
}

// ClassifierFunc adapts a function to Classifier.
type ClassifierFunc func(error) Class

// Classify calls f.
func (f ClassifierFunc) Classify(err error) Class { return f(err) }

// ErrInvalidVolume is wrapped by every error about a pod's volume spec.
var ErrInvalidVolume = errors.New("invalid volume")

// FieldError names the field of a pod or PersistentVolume that is wrong.
type FieldError struct {
	Field  string
	Detail string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Detail }

// Unwrap makes errors.Is(err, ErrInvalidVolume) true.
func (e *FieldError) Unwrap() error { return ErrInvalidVolume }
