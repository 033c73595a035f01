package scsivolume

import (
	"context"
	"errors"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/plugins/internal/scsi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk/mount"
)

// Server translates the Volume service to Volumes calls and maps errors.
type Server struct {
	volumev1.UnimplementedVolumeServer
	Volumes *Volumes
	// RequiresAttach makes the host call Attach and Detach (FC); without
	// it Stage attaches and Unstage releases (iSCSI, whose login needs the
	// secrets Stage is given).
	RequiresAttach bool
	// Metrics tells, on each call, whether the plugin serves metrics (its
	// config's metrics); nil means it does.
	Metrics func() bool
}

// errMetricsOff is the answer of GetMetrics when metrics are off.
var errMetricsOff = status.Error(codes.FailedPrecondition, "metrics are off (config metrics: false) and not declared in GetCapabilities")

func (s *Server) metrics() bool { return s.Metrics == nil || s.Metrics() }

// GetCapabilities declares every step both plugins serve, metrics for
// block volumes included (SupportsMetrics, unless the config turns them
// off), explicitly.
func (s *Server) GetCapabilities(context.Context, *volumev1.GetCapabilitiesRequest) (*volumev1.GetCapabilitiesResponse, error) {
	return &volumev1.GetCapabilitiesResponse{
		RequiresAttach: s.RequiresAttach, StageUnstage: true, Block: true, SupportsMetrics: s.metrics(), Reconstruction: true,
	}, nil
}

func (s *Server) Attach(ctx context.Context, req *volumev1.AttachRequest) (*volumev1.AttachResponse, error) {
	pc, err := s.Volumes.Attach(ctx, req.GetVolumeId(), req.GetVolumeContext(), req.GetSecrets())
	return reply(&volumev1.AttachResponse{PublishContext: pc}, err)
}

func (s *Server) Detach(ctx context.Context, req *volumev1.DetachRequest) (*volumev1.DetachResponse, error) {
	return reply(&volumev1.DetachResponse{}, s.Volumes.Detach(ctx, req.GetVolumeId(), req.GetVolumeContext()))
}

func (s *Server) Stage(ctx context.Context, req *volumev1.StageRequest) (*volumev1.StageResponse, error) {
	c := req.GetCapability()
	err := s.Volumes.Stage(ctx, StageArgs{
		ID: req.GetVolumeId(), StagingPath: req.GetStagingPath(),
		PublishContext: req.GetPublishContext(), Context: req.GetVolumeContext(), Secrets: req.GetSecrets(), SecretsDir: req.GetSecretsDir(),
		Block: c.GetBlock() != nil, FsType: c.GetMount().GetFsType(), MountFlags: mountFlags(c),
	})
	return reply(&volumev1.StageResponse{}, err)
}

func (s *Server) Unstage(ctx context.Context, req *volumev1.UnstageRequest) (*volumev1.UnstageResponse, error) {
	return reply(&volumev1.UnstageResponse{}, s.Volumes.Unstage(ctx, req.GetVolumeId(), req.GetStagingPath()))
}

func (s *Server) Publish(ctx context.Context, req *volumev1.PublishRequest) (*volumev1.PublishResponse, error) {
	if req.GetCapability().GetBlock() != nil {
		return nil, status.Error(codes.InvalidArgument, "capability: a block volume is mapped with MapBlock, not published")
	}
	err := s.Volumes.Publish(ctx, req.GetVolumeId(), req.GetStagingPath(), req.GetTargetPath(), req.GetReadonly())
	return reply(&volumev1.PublishResponse{}, err)
}

func (s *Server) Unpublish(ctx context.Context, req *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error) {
	return reply(&volumev1.UnpublishResponse{}, s.Volumes.Unpublish(ctx, req.GetVolumeId(), req.GetTargetPath()))
}

func (s *Server) MapBlock(ctx context.Context, req *volumev1.MapBlockRequest) (*volumev1.MapBlockResponse, error) {
	err := s.Volumes.MapBlock(ctx, req.GetVolumeId(), req.GetStagingPath(), req.GetTargetPath(), req.GetReadonly())
	return reply(&volumev1.MapBlockResponse{}, err)
}

func (s *Server) UnmapBlock(ctx context.Context, req *volumev1.UnmapBlockRequest) (*volumev1.UnmapBlockResponse, error) {
	return reply(&volumev1.UnmapBlockResponse{}, s.Volumes.UnmapBlock(ctx, req.GetVolumeId(), req.GetTargetPath()))
}

// GetMetrics answers FAILED_PRECONDITION when metrics are off: a host
// that asks all the same counts a failure, which shows.
func (s *Server) GetMetrics(ctx context.Context, req *volumev1.GetMetricsRequest) (*volumev1.GetMetricsResponse, error) {
	if !s.metrics() {
		return nil, errMetricsOff
	}
	u, err := s.Volumes.Metrics(ctx, req.GetVolumeId(), req.GetVolumePath())
	return reply(&volumev1.GetMetricsResponse{
		TotalBytes: u.TotalBytes, UsedBytes: u.UsedBytes, AvailableBytes: u.AvailableBytes,
		TotalInodes: u.TotalInodes, UsedInodes: u.UsedInodes, AvailableInodes: u.AvailableInodes,
	}, err)
}

func (s *Server) Reconstruct(ctx context.Context, req *volumev1.ReconstructRequest) (*volumev1.ReconstructResponse, error) {
	r, err := s.Volumes.Reconstruct(ctx, req.GetTargetPath())
	if err != nil || !r.Found {
		return reply(&volumev1.ReconstructResponse{}, err)
	}
	c := &volumev1.Capability{AccessMode: volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_WRITER}
	if r.Block {
		c.AccessType = &volumev1.Capability_Block{Block: &volumev1.Capability_BlockVolume{}}
	} else {
		c.AccessType = &volumev1.Capability_Mount{Mount: &volumev1.Capability_MountVolume{FsType: r.FsType}}
	}
	return &volumev1.ReconstructResponse{Found: true, VolumeId: r.VolumeID, StagingPath: r.StagingPath, Capability: c, VolumeContext: r.Context}, nil
}

// mountFlags are the capability's flags, with ro added for a reader-only
// access mode.
func mountFlags(c *volumev1.Capability) []string {
	flags := slices.Clone(c.GetMount().GetMountFlags())
	switch c.GetAccessMode() {
	case volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_READER_ONLY, volumev1.AccessMode_ACCESS_MODE_MULTI_NODE_READER_ONLY:
		if !slices.Contains(flags, "ro") {
			flags = append(flags, "ro")
		}
	}
	return flags
}

// reply returns resp, or the gRPC status for err.
func reply[T any](resp *T, err error) (*T, error) {
	if err != nil {
		return nil, toStatus(err)
	}
	return resp, nil
}

// toStatus maps errors to the contract's codes. Anything unexpected (a
// failed unmount, a command that failed midway) is ABORTED: the call may
// have taken effect in part, and the host treats it as uncertain.
func toStatus(err error) error {
	code := codes.Aborted
	switch {
	case errors.Is(err, ErrInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, errNotStaged), errors.Is(err, errSecretsDir):
		code = codes.FailedPrecondition
	case errors.Is(err, errOtherVolume):
		code = codes.AlreadyExists
	case errors.Is(err, errNotFound), errors.Is(err, mount.ErrNotMounted), errors.Is(err, scsi.ErrNoDisk):
		code = codes.NotFound
	case errors.Is(err, scsi.ErrAuth):
		code = codes.PermissionDenied
	case errors.Is(err, errFinal):
		code = codes.Internal
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	return status.Error(code, err.Error())
}
