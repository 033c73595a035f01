package sdk

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/pluginapi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// volumeServer serves a Volumes as the Volume service: it checks each
// request, calls the plugin with plain Go values and maps its errors.
type volumeServer struct {
	volumev1.UnimplementedVolumeServer
	v         Volumes
	opaqueIDs bool
}

// volumeCapabilities are the capability names v's optional interfaces give.
func volumeCapabilities(v Volumes) []string {
	var caps []string
	if _, ok := v.(VolumeMetrics); ok {
		caps = append(caps, pluginapi.CapVolumeMetrics)
	}
	if _, ok := v.(VolumeBlockMapper); ok {
		caps = append(caps, pluginapi.CapVolumeBlock)
	}
	if _, ok := v.(VolumeReconstructor); ok {
		caps = append(caps, pluginapi.CapVolumeReconstruct)
	}
	return caps
}

func (s *volumeServer) GetCapabilities(context.Context, *volumev1.GetCapabilitiesRequest) (*volumev1.GetCapabilitiesResponse, error) {
	_, attaches := s.v.(VolumeAttacher)
	_, block := s.v.(VolumeBlockMapper)
	_, metrics := s.v.(VolumeMetrics)
	_, reconstructs := s.v.(VolumeReconstructor)
	return &volumev1.GetCapabilitiesResponse{
		RequiresAttach: attaches, StageUnstage: true, Block: block,
		SupportsMetrics: metrics, Reconstruction: reconstructs,
	}, nil
}

// args checks a request's arguments in order; the first problem is the
// answer, INVALID_ARGUMENT naming the field.
type args struct {
	s   *volumeServer
	err error
}

func (a *args) fail(format string, v ...any) {
	if a.err == nil {
		a.err = status.Errorf(codes.InvalidArgument, format, v...)
	}
}

// id requires a volume ID that is one clean path element, unless the plugin
// takes opaque IDs.
func (a *args) id(id string) *args {
	switch {
	case id == "":
		a.fail("volume_id is required")
	case a.s.opaqueIDs:
	case id == "." || id == ".." || strings.ContainsAny(id, "/\x00") || filepath.Clean(id) != id:
		a.fail("volume_id %q is not a single path element: a volume ID is untrusted and must not name a path", id)
	}
	return a
}

// path requires an absolute path in field.
func (a *args) path(field, path string) *args {
	switch {
	case path == "":
		a.fail("%s is required", field)
	case !filepath.IsAbs(path):
		a.fail("%s %q is not an absolute path", field, path)
	}
	return a
}

// capability refuses a block volume when the plugin serves none.
func (a *args) capability(c *volumev1.Capability) *args {
	if _, ok := a.s.v.(VolumeBlockMapper); c.GetBlock() != nil && !ok {
		a.fail("capability: raw block volumes are not served by this plugin")
	}
	return a
}

func (s *volumeServer) check() *args { return &args{s: s} }

func capabilityOf(c *volumev1.Capability) Capability {
	mode := c.GetAccessMode()
	if mode == volumev1.AccessMode_ACCESS_MODE_UNSPECIFIED {
		mode = volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_WRITER
	}
	m := c.GetMount()
	return Capability{Block: c.GetBlock() != nil, FSType: m.GetFsType(), MountFlags: m.GetMountFlags(), MountGroup: m.GetVolumeMountGroup(), AccessMode: mode}
}

// answer returns resp, or the contract's status for err.
func answer[T any](resp *T, err error) (*T, error) {
	if err != nil {
		return nil, volumeStatus(err)
	}
	return resp, nil
}

func (s *volumeServer) Stage(ctx context.Context, req *volumev1.StageRequest) (*volumev1.StageResponse, error) {
	if err := s.check().id(req.GetVolumeId()).path("staging_path", req.GetStagingPath()).capability(req.GetCapability()).err; err != nil {
		return nil, err
	}
	return answer(&volumev1.StageResponse{}, s.v.Stage(ctx, StageRequest{
		VolumeID: req.GetVolumeId(), StagingPath: req.GetStagingPath(), Capability: capabilityOf(req.GetCapability()),
		PublishContext: req.GetPublishContext(), VolumeContext: req.GetVolumeContext(), Secrets: req.GetSecrets(),
		Driver: req.GetDriver(), SecretsDir: req.GetSecretsDir(),
	}))
}

func (s *volumeServer) Unstage(ctx context.Context, req *volumev1.UnstageRequest) (*volumev1.UnstageResponse, error) {
	if err := s.check().id(req.GetVolumeId()).path("staging_path", req.GetStagingPath()).err; err != nil {
		return nil, err
	}
	return answer(&volumev1.UnstageResponse{}, s.v.Unstage(ctx, UnstageRequest{
		VolumeID: req.GetVolumeId(), StagingPath: req.GetStagingPath(), Driver: req.GetDriver(),
	}))
}

func (s *volumeServer) publishRequest(req interface {
	GetVolumeId() string
	GetStagingPath() string
	GetTargetPath() string
	GetReadonly() bool
	GetCapability() *volumev1.Capability
	GetPublishContext() map[string]string
	GetVolumeContext() map[string]string
	GetSecrets() map[string]string
	GetDriver() string
	GetSecretsDir() string
}) (PublishRequest, error) {
	err := s.check().id(req.GetVolumeId()).path("target_path", req.GetTargetPath()).
		path("staging_path", req.GetStagingPath()).capability(req.GetCapability()).err
	return PublishRequest{
		VolumeID: req.GetVolumeId(), StagingPath: req.GetStagingPath(), TargetPath: req.GetTargetPath(),
		Readonly: req.GetReadonly(), Capability: capabilityOf(req.GetCapability()),
		PublishContext: req.GetPublishContext(), VolumeContext: req.GetVolumeContext(), Secrets: req.GetSecrets(),
		Driver: req.GetDriver(), SecretsDir: req.GetSecretsDir(),
	}, err
}

func (s *volumeServer) Publish(ctx context.Context, req *volumev1.PublishRequest) (*volumev1.PublishResponse, error) {
	r, err := s.publishRequest(req)
	if err != nil {
		return nil, err
	}
	if r.Capability.Block {
		return nil, status.Error(codes.InvalidArgument, "capability: a raw block volume is mapped with MapBlock, not published")
	}
	return answer(&volumev1.PublishResponse{}, s.v.Publish(ctx, r))
}

func (s *volumeServer) unpublishRequest(id, target, driver string) (UnpublishRequest, error) {
	err := s.check().id(id).path("target_path", target).err
	return UnpublishRequest{VolumeID: id, TargetPath: target, Driver: driver}, err
}

func (s *volumeServer) Unpublish(ctx context.Context, req *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error) {
	r, err := s.unpublishRequest(req.GetVolumeId(), req.GetTargetPath(), req.GetDriver())
	if err != nil {
		return nil, err
	}
	return answer(&volumev1.UnpublishResponse{}, s.v.Unpublish(ctx, r))
}

func (s *volumeServer) GetMetrics(ctx context.Context, req *volumev1.GetMetricsRequest) (*volumev1.GetMetricsResponse, error) {
	m, ok := s.v.(VolumeMetrics)
	if !ok {
		return s.UnimplementedVolumeServer.GetMetrics(ctx, req)
	}
	if err := s.check().id(req.GetVolumeId()).path("volume_path", req.GetVolumePath()).err; err != nil {
		return nil, err
	}
	u, err := m.Metrics(ctx, MetricsRequest{
		VolumeID: req.GetVolumeId(), VolumePath: req.GetVolumePath(), StagingPath: req.GetStagingPath(), Driver: req.GetDriver(),
	})
	return answer(&volumev1.GetMetricsResponse{
		TotalBytes: u.TotalBytes, UsedBytes: u.UsedBytes, AvailableBytes: u.AvailableBytes,
		TotalInodes: u.TotalInodes, UsedInodes: u.UsedInodes, AvailableInodes: u.AvailableInodes,
	}, err)
}

func (s *volumeServer) Reconstruct(ctx context.Context, req *volumev1.ReconstructRequest) (*volumev1.ReconstructResponse, error) {
	r, ok := s.v.(VolumeReconstructor)
	if !ok {
		return s.UnimplementedVolumeServer.Reconstruct(ctx, req)
	}
	if err := s.check().path("target_path", req.GetTargetPath()).err; err != nil {
		return nil, err
	}
	v, found, err := r.Reconstruct(ctx, req.GetTargetPath())
	if err != nil || !found {
		return answer(&volumev1.ReconstructResponse{}, err)
	}
	c := v.Capability
	capability := &volumev1.Capability{AccessMode: c.AccessMode}
	if c.Block {
		capability.AccessType = &volumev1.Capability_Block{Block: &volumev1.Capability_BlockVolume{}}
	} else {
		capability.AccessType = &volumev1.Capability_Mount{Mount: &volumev1.Capability_MountVolume{
			FsType: c.FSType, MountFlags: c.MountFlags, VolumeMountGroup: c.MountGroup,
		}}
	}
	return &volumev1.ReconstructResponse{
		Found: true, VolumeId: v.VolumeID, StagingPath: v.StagingPath, Capability: capability,
		VolumeContext: v.VolumeContext, Driver: v.Driver,
	}, nil
}

func (s *volumeServer) Attach(ctx context.Context, req *volumev1.AttachRequest) (*volumev1.AttachResponse, error) {
	a, ok := s.v.(VolumeAttacher)
	if !ok {
		return s.UnimplementedVolumeServer.Attach(ctx, req)
	}
	if err := s.check().id(req.GetVolumeId()).err; err != nil {
		return nil, err
	}
	pc, err := a.Attach(ctx, AttachRequest{
		VolumeID: req.GetVolumeId(), NodeID: req.GetNodeId(), Readonly: req.GetReadonly(),
		VolumeContext: req.GetVolumeContext(), Secrets: req.GetSecrets(),
	})
	return answer(&volumev1.AttachResponse{PublishContext: pc}, err)
}

func (s *volumeServer) Detach(ctx context.Context, req *volumev1.DetachRequest) (*volumev1.DetachResponse, error) {
	a, ok := s.v.(VolumeAttacher)
	if !ok {
		return s.UnimplementedVolumeServer.Detach(ctx, req)
	}
	if err := s.check().id(req.GetVolumeId()).err; err != nil {
		return nil, err
	}
	return answer(&volumev1.DetachResponse{}, a.Detach(ctx, DetachRequest{
		VolumeID: req.GetVolumeId(), NodeID: req.GetNodeId(), VolumeContext: req.GetVolumeContext(),
	}))
}

func (s *volumeServer) MapBlock(ctx context.Context, req *volumev1.MapBlockRequest) (*volumev1.MapBlockResponse, error) {
	b, ok := s.v.(VolumeBlockMapper)
	if !ok {
		return s.UnimplementedVolumeServer.MapBlock(ctx, req)
	}
	r, err := s.publishRequest(req)
	if err != nil {
		return nil, err
	}
	r.Capability.Block = true
	return answer(&volumev1.MapBlockResponse{}, b.MapBlock(ctx, r))
}

func (s *volumeServer) UnmapBlock(ctx context.Context, req *volumev1.UnmapBlockRequest) (*volumev1.UnmapBlockResponse, error) {
	b, ok := s.v.(VolumeBlockMapper)
	if !ok {
		return s.UnimplementedVolumeServer.UnmapBlock(ctx, req)
	}
	r, err := s.unpublishRequest(req.GetVolumeId(), req.GetTargetPath(), req.GetDriver())
	if err != nil {
		return nil, err
	}
	return answer(&volumev1.UnmapBlockResponse{}, b.UnmapBlock(ctx, r))
}

// volumeServerFor returns the Volume service for p.Volumes and the
// capabilities GetInfo lists: p.Capabilities and those derived from the
// interfaces p.Volumes implements. A listed capability that p.Volumes
// does not implement is an error: the two lists cannot disagree.
func volumeServerFor(p Plugin) (volumev1.VolumeServer, []string, error) {
	derived := volumeCapabilities(p.Volumes)
	caps := append([]string(nil), derived...)
	for _, c := range p.Capabilities {
		switch c {
		case pluginapi.CapVolumeMetrics, pluginapi.CapVolumeBlock, pluginapi.CapVolumeReconstruct:
			if !slices.Contains(derived, c) {
				return nil, nil, fmt.Errorf("capability %q is listed but Volumes (%T) does not implement it", c, p.Volumes)
			}
		default:
			if !slices.Contains(caps, c) {
				caps = append(caps, c)
			}
		}
	}
	return &volumeServer{v: p.Volumes, opaqueIDs: p.OpaqueVolumeIDs}, caps, nil
}
