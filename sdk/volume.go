package sdk

import (
	"context"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk/internal/midway"
)

// Volumes is the logic of a volume plugin, which the SDK serves as the
// Volume service of proto/volume/v1 when it is Plugin.Volumes. The SDK
// checks every request before it calls a method: the required arguments
// are set, paths are absolute, and the volume ID is a single clean path
// element (unless Plugin.OpaqueVolumeIDs). A method's error is mapped to
// the contract's codes by what it wraps (see ErrNotFound).
//
// Every method must be idempotent: a call that already took effect with the
// same arguments succeeds and changes nothing, and Unstage and Unpublish
// succeed when there is nothing to undo, also when the path does not exist.
// Stage and Publish call Midway after they changed the node and return its
// error joined with theirs.
//
// Optional steps are optional interfaces: VolumeMetrics, VolumeReconstructor,
// VolumeAttacher and VolumeBlockMapper. The capabilities the plugin
// advertises, in GetInfo and in GetCapabilities, are derived from the ones
// the value implements.
type Volumes interface {
	// Stage makes the volume ready on the node at req.StagingPath, a
	// directory the host created; ErrAlreadyExists when it holds another
	// volume.
	Stage(ctx context.Context, req StageRequest) error
	// Unstage undoes Stage. It keeps req.StagingPath, which the host
	// removes.
	Unstage(ctx context.Context, req UnstageRequest) error
	// Publish makes the staged volume visible at req.TargetPath, which it
	// creates; ErrNotStaged when the volume is not staged at
	// req.StagingPath, ErrAlreadyExists when the target shows another
	// volume or the same one with other arguments.
	Publish(ctx context.Context, req PublishRequest) error
	// Unpublish undoes Publish and removes req.TargetPath.
	Unpublish(ctx context.Context, req UnpublishRequest) error
}

// VolumeMetrics is implemented by a plugin that reports the usage of a
// published volume (capability volume.metrics). A path that is not a
// published volume is ErrNotFound.
type VolumeMetrics interface {
	Metrics(ctx context.Context, req MetricsRequest) (VolumeUsage, error)
}

// VolumeReconstructor is implemented by a plugin that tells, after a host
// restart, which volume is published at a target path (capability
// volume.reconstruct). found is false, with a nil error, when nothing of the
// plugin is there.
type VolumeReconstructor interface {
	Reconstruct(ctx context.Context, targetPath string) (v Reconstructed, found bool, err error)
}

// VolumeAttacher is implemented by a plugin whose volumes must be attached
// to the node before Stage (requires_attach); Attach's publish context is
// passed to Stage and Publish.
type VolumeAttacher interface {
	Attach(ctx context.Context, req AttachRequest) (publishContext map[string]string, err error)
	Detach(ctx context.Context, req DetachRequest) error
}

// VolumeBlockMapper is implemented by a plugin that serves raw block
// volumes (capability volume.block). Without it, the SDK refuses a request
// whose capability asks for a block volume.
type VolumeBlockMapper interface {
	MapBlock(ctx context.Context, req PublishRequest) error
	UnmapBlock(ctx context.Context, req UnpublishRequest) error
}

// Capability is how a volume is used: a filesystem (Block false) or a raw
// block device, and with which access mode.
type Capability struct {
	Block bool
	// FSType is the filesystem type, empty for the plugin's default.
	FSType     string
	MountFlags []string
	// MountGroup is the pod's fsGroup as a decimal id; empty for none.
	MountGroup string
	// AccessMode is ACCESS_MODE_SINGLE_NODE_WRITER when the host sent none.
	AccessMode volumev1.AccessMode
}

// AttachRequest asks VolumeAttacher.Attach to attach a volume to a node.
type AttachRequest struct {
	VolumeID      string
	NodeID        string
	Readonly      bool
	VolumeContext map[string]string
	Secrets       map[string]string
}

// DetachRequest asks VolumeAttacher.Detach to undo Attach.
type DetachRequest struct {
	VolumeID      string
	NodeID        string
	VolumeContext map[string]string
}

// StageRequest asks Volumes.Stage to stage a volume. VolumeContext,
// PublishContext, Secrets and the paths come from the pod's spec or the
// operator: treat them as untrusted, never as paths of your own.
type StageRequest struct {
	VolumeID       string
	StagingPath    string
	Capability     Capability
	PublishContext map[string]string
	VolumeContext  map[string]string
	Secrets        map[string]string
	// Driver names the backend of a plugin that fronts several; empty for
	// the only one.
	Driver string
	// SecretsDir holds more secrets, one file per key; empty for none.
	SecretsDir string
}

// UnstageRequest asks Volumes.Unstage to undo Stage.
type UnstageRequest struct {
	VolumeID    string
	StagingPath string
	Driver      string
}

// PublishRequest asks Volumes.Publish (or VolumeBlockMapper.MapBlock) to
// make a staged volume visible at TargetPath.
type PublishRequest struct {
	VolumeID       string
	StagingPath    string
	TargetPath     string
	Readonly       bool
	Capability     Capability
	PublishContext map[string]string
	VolumeContext  map[string]string
	Secrets        map[string]string
	Driver         string
	SecretsDir     string
}

// UnpublishRequest asks Volumes.Unpublish (or VolumeBlockMapper.UnmapBlock)
// to undo Publish.
type UnpublishRequest struct {
	VolumeID   string
	TargetPath string
	Driver     string
}

// MetricsRequest asks VolumeMetrics.Metrics for the usage of the volume
// published at VolumePath.
type MetricsRequest struct {
	VolumeID    string
	VolumePath  string
	StagingPath string
	Driver      string
}

// VolumeUsage is the space and inode usage of a volume: used is what is not
// free, available what an unprivileged writer may still use, so used +
// available <= total. sdk/mount.MountUsage computes it for a mount point.
type VolumeUsage struct {
	TotalBytes, UsedBytes, AvailableBytes    int64
	TotalInodes, UsedInodes, AvailableInodes int64
}

// Reconstructed is what VolumeReconstructor.Reconstruct found at a target
// path.
type Reconstructed struct {
	VolumeID      string
	StagingPath   string
	Capability    Capability
	VolumeContext map[string]string
	Driver        string
}

// Midway is the conformance kit's interrupt point. Stage and Publish call
// it once they changed the node (mounted something) and return its error
// joined with their own:
//
//	err := mount.BindOnce(dir, req.StagingPath, false)
//	return errors.Join(err, sdk.Midway(ctx))
//
// It returns ctx.Err(), which makes an interrupted call uncertain. In
// production that is all it does; under sdk/volumetest it is where the kit
// ends the call's context, to check that the plugin answers uncertain and
// that Unpublish and Unstage undo what it did.
func Midway(ctx context.Context) error {
	midway.Call(ctx)
	return ctx.Err()
}
