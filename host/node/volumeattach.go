package node

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/sources"
)

// apiAttachments tells the volume manager, in Kubernetes mode, which CSI
// volumes the cluster attaches to the node and whether it has, with the
// node's credentials and as the kubelet's CSI plugin decides: a CSI volume
// of a pod of the API server needs attaching unless its driver's CSIDriver
// object says attachRequired: false (a driver without a CSIDriver object
// needs it, as the attach/detach controller then creates a
// VolumeAttachment); it is attached once the controller lists it in the
// Node's status.volumesAttached and the VolumeAttachment it names for
// (handle, driver, node) says status.attached, whose
// status.attachmentMetadata is the publish context. The Node comes first,
// as for the kubelet: the Node authorizer lets a node read only the
// VolumeAttachments that exist for it. FC and iSCSI volumes, and the
// volumes of static pods (whose claims the API server does not know),
// never wait.
type apiAttachments struct {
	client kubernetes.Interface
	node   string
	origin func(types.UID) (sources.Origin, bool)
}

func (a *apiAttachments) AttachRequired(ctx context.Context, pod *v1.Pod, v volumemanager.Volume) (bool, error) {
	if v.CSI == nil {
		return false, nil
	}
	if o, ok := a.origin(pod.UID); !ok || o.Source != sources.SourceAPIServer {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, claimTimeout)
	defer cancel()
	d, err := a.client.StorageV1().CSIDrivers().Get(ctx, v.CSI.Driver, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading CSIDriver %s: %w", v.CSI.Driver, err)
	}
	return d.Spec.AttachRequired == nil || *d.Spec.AttachRequired, nil
}

func (a *apiAttachments) Attached(ctx context.Context, v volumemanager.Volume) (map[string]string, error) {
	if v.CSI == nil {
		return nil, fmt.Errorf("volume %s: only CSI volumes are attached by the cluster", v.ID)
	}
	ctx, cancel := context.WithTimeout(ctx, claimTimeout)
	defer cancel()
	node, err := a.client.CoreV1().Nodes().Get(ctx, a.node, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading node %s: %w", a.node, err)
	}
	if !slices.ContainsFunc(node.Status.VolumesAttached, func(av v1.AttachedVolume) bool { return string(av.Name) == string(v.ID) }) {
		return nil, fmt.Errorf("volume %s is not in the node's volumesAttached: %w", v.ID, volumemanager.ErrNotAttached)
	}
	name := attachmentName(v.CSI.VolumeHandle, v.CSI.Driver, a.node)
	va, err := a.client.StorageV1().VolumeAttachments().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		// Forbidden: the Node authorizer does not link it to the node (yet).
		return nil, fmt.Errorf("VolumeAttachment %s: %w: %w", name, volumemanager.ErrNotAttached, err)
	}
	if err != nil {
		return nil, fmt.Errorf("reading VolumeAttachment %s: %w", name, err)
	}
	if va.Spec.NodeName != a.node || va.Spec.Attacher != v.CSI.Driver {
		return nil, fmt.Errorf("VolumeAttachment %s is for node %q and attacher %q, not %q and %q: %w",
			name, va.Spec.NodeName, va.Spec.Attacher, a.node, v.CSI.Driver, volumemanager.ErrNotAttached)
	}
	if !va.Status.Attached {
		why := ""
		if e := va.Status.AttachError; e != nil {
			why = " (attach error: " + e.Message + ")"
		}
		return nil, fmt.Errorf("VolumeAttachment %s%s: %w", name, why, volumemanager.ErrNotAttached)
	}
	return va.Status.AttachmentMetadata, nil
}

// attachmentName is the name the attach/detach controller gives the
// VolumeAttachment of a CSI volume on a node: "csi-" and the hex sha256
// of the volume handle, the driver and the node name.
func attachmentName(handle, driver, node string) string {
	return fmt.Sprintf("csi-%x", sha256.Sum256([]byte(handle+driver+node)))
}

// volumeAttachments is the volume manager's Attachments: the API server's
// in Kubernetes mode, none otherwise.
func (n *Node) volumeAttachments() volumemanager.Attachments {
	if !n.cfg.Kubernetes.enabled() {
		return nil
	}
	return &apiAttachments{client: n.cfg.Kubernetes.Client, node: n.cfg.NodeName, origin: n.desired.nextOrigin}
}

// volumesReported tells the volume manager which volumes the API server
// has in the node's volumesInUse.
func (n *Node) volumesReported(names []v1.UniqueVolumeName) {
	if n.volumes == nil {
		return
	}
	ids := make([]volumemanager.VolumeID, len(names))
	for i, name := range names {
		ids[i] = volumemanager.VolumeID(name)
	}
	n.volumes.MarkVolumesReportedInUse(ids)
}
