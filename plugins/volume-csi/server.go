package main

import (
	"context"
	"encoding/json"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/protobuf/encoding/protojson"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk"
)

// newPlugin describes volume-csi to the SDK.
func newPlugin(version string) sdk.Plugin {
	p := &csiPlugin{}
	return sdk.Plugin{
		Name:         "volume-csi",
		Version:      version,
		Kind:         sdk.KindVolume,
		Capabilities: []string{sdk.CapVolumeMetrics, sdk.CapVolumeBlock, sdk.CapVolumeReconstruct, sdk.CapVolumeCSIRegistration},
		Volume:       &server{p: p},
		Configure:    configure(p),
		Probe:        p.probe,
		Close:        p.close,
	}
}

func configure(p *csiPlugin) func(context.Context, json.RawMessage) []sdk.FieldError {
	return func(_ context.Context, raw json.RawMessage) []sdk.FieldError {
		c, errs := parseConfig(raw)
		if len(errs) > 0 {
			return errs
		}
		if err := p.configure(c); err != nil {
			return []sdk.FieldError{{Field: "drivers", Message: err.Error()}}
		}
		return nil
	}
}

// server translates the Volume service to the plugin's calls and maps
// their errors; the CSI work is in node.go.
type server struct {
	volumev1.UnimplementedVolumeServer
	p *csiPlugin
}

// GetCapabilities: every step a CSI driver may need. Stage and GetMetrics
// succeed without effect, or answer UNIMPLEMENTED, for a driver without
// STAGE_UNSTAGE_VOLUME or GET_VOLUME_STATS.
func (s *server) GetCapabilities(context.Context, *volumev1.GetCapabilitiesRequest) (*volumev1.GetCapabilitiesResponse, error) {
	return &volumev1.GetCapabilitiesResponse{StageUnstage: true, Block: true, SupportsMetrics: true, Reconstruction: true}, nil
}

func (s *server) Stage(ctx context.Context, req *volumev1.StageRequest) (*volumev1.StageResponse, error) {
	v := volume{
		Driver: req.GetDriver(), ID: req.GetVolumeId(), PublishContext: req.GetPublishContext(), Context: req.GetVolumeContext(),
		Secrets: req.GetSecrets(), SecretsDir: req.GetSecretsDir(), Capability: toCSI(req.GetCapability(), false),
	}
	return reply(&volumev1.StageResponse{}, s.p.stage(ctx, v, req.GetStagingPath()))
}

func (s *server) Unstage(ctx context.Context, req *volumev1.UnstageRequest) (*volumev1.UnstageResponse, error) {
	return reply(&volumev1.UnstageResponse{}, s.p.unstage(ctx, req.GetDriver(), req.GetVolumeId(), req.GetStagingPath()))
}

func (s *server) Publish(ctx context.Context, req *volumev1.PublishRequest) (*volumev1.PublishResponse, error) {
	v := volume{
		Driver: req.GetDriver(), ID: req.GetVolumeId(), PublishContext: req.GetPublishContext(), Context: req.GetVolumeContext(),
		Secrets: req.GetSecrets(), SecretsDir: req.GetSecretsDir(), Capability: toCSI(req.GetCapability(), false),
		Readonly: req.GetReadonly(), RecordCapability: encodeCapability(req.GetCapability()),
	}
	return reply(&volumev1.PublishResponse{}, s.p.publish(ctx, v, req.GetStagingPath(), req.GetTargetPath()))
}

func (s *server) Unpublish(ctx context.Context, req *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error) {
	return reply(&volumev1.UnpublishResponse{}, s.p.unpublish(ctx, req.GetDriver(), req.GetVolumeId(), req.GetTargetPath()))
}

func (s *server) MapBlock(ctx context.Context, req *volumev1.MapBlockRequest) (*volumev1.MapBlockResponse, error) {
	c := blockCapability(req.GetCapability())
	v := volume{
		Driver: req.GetDriver(), ID: req.GetVolumeId(), PublishContext: req.GetPublishContext(), Context: req.GetVolumeContext(),
		Secrets: req.GetSecrets(), SecretsDir: req.GetSecretsDir(), Capability: toCSI(c, true),
		Readonly: req.GetReadonly(), RecordCapability: encodeCapability(c),
	}
	return reply(&volumev1.MapBlockResponse{}, s.p.publish(ctx, v, req.GetStagingPath(), req.GetTargetPath()))
}

func (s *server) UnmapBlock(ctx context.Context, req *volumev1.UnmapBlockRequest) (*volumev1.UnmapBlockResponse, error) {
	return reply(&volumev1.UnmapBlockResponse{}, s.p.unpublish(ctx, req.GetDriver(), req.GetVolumeId(), req.GetTargetPath()))
}

func (s *server) GetMetrics(ctx context.Context, req *volumev1.GetMetricsRequest) (*volumev1.GetMetricsResponse, error) {
	u, err := s.p.metrics(ctx, req.GetDriver(), req.GetVolumeId(), req.GetVolumePath(), req.GetStagingPath())
	return reply(&volumev1.GetMetricsResponse{
		AvailableBytes: u.AvailableBytes, TotalBytes: u.TotalBytes, UsedBytes: u.UsedBytes,
		AvailableInodes: u.AvailableInodes, TotalInodes: u.TotalInodes, UsedInodes: u.UsedInodes,
	}, err)
}

func (s *server) Reconstruct(_ context.Context, req *volumev1.ReconstructRequest) (*volumev1.ReconstructResponse, error) {
	r, found, err := s.p.reconstruct(req.GetTargetPath())
	if err != nil || !found {
		return reply(&volumev1.ReconstructResponse{}, err)
	}
	var c volumev1.Capability
	if len(r.Capability) > 0 {
		if err := protojson.Unmarshal(r.Capability, &c); err != nil {
			return reply[volumev1.ReconstructResponse](nil, err)
		}
	}
	return &volumev1.ReconstructResponse{
		Found: true, VolumeId: r.VolumeID, StagingPath: r.StagingPath, Capability: &c, VolumeContext: r.Context, Driver: r.Driver,
	}, nil
}

func (s *server) RegisterDriver(ctx context.Context, req *volumev1.RegisterDriverRequest) (*volumev1.RegisterDriverResponse, error) {
	f, err := s.p.register(ctx, req.GetName(), req.GetEndpoint())
	if err != nil {
		return reply[volumev1.RegisterDriverResponse](nil, err)
	}
	return &volumev1.RegisterDriverResponse{NodeId: f.nodeID, MaxVolumesPerNode: f.maxVolumes, AccessibleTopology: f.topology}, nil
}

func (s *server) DeregisterDriver(_ context.Context, req *volumev1.DeregisterDriverRequest) (*volumev1.DeregisterDriverResponse, error) {
	s.p.deregister(req.GetName())
	return &volumev1.DeregisterDriverResponse{}, nil
}

// reply returns resp, or the contract's status for err.
func reply[T any](resp *T, err error) (*T, error) {
	if err != nil {
		return nil, toStatus(err)
	}
	return resp, nil
}

// accessModes maps the contract's access modes to CSI's.
var accessModes = map[volumev1.AccessMode]csi.VolumeCapability_AccessMode_Mode{
	volumev1.AccessMode_ACCESS_MODE_UNSPECIFIED:               csi.VolumeCapability_AccessMode_UNKNOWN,
	volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_WRITER:        csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
	volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_READER_ONLY:   csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
	volumev1.AccessMode_ACCESS_MODE_MULTI_NODE_READER_ONLY:    csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY,
	volumev1.AccessMode_ACCESS_MODE_MULTI_NODE_MULTI_WRITER:   csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER,
	volumev1.AccessMode_ACCESS_MODE_MULTI_NODE_SINGLE_WRITER:  csi.VolumeCapability_AccessMode_MULTI_NODE_SINGLE_WRITER,
	volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_SINGLE_WRITER: csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER,
	volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_MULTI_WRITER:  csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER,
}

// defaultCapability is a filesystem of the driver's default type for a
// single-node writer, what a request without a capability means.
func defaultCapability() *volumev1.Capability {
	return &volumev1.Capability{
		AccessType: &volumev1.Capability_Mount{Mount: &volumev1.Capability_MountVolume{}},
		AccessMode: volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_WRITER,
	}
}

// blockCapability is c as a raw block capability (MapBlock maps blocks
// whatever the access type says).
func blockCapability(c *volumev1.Capability) *volumev1.Capability {
	mode := volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_WRITER
	if c != nil {
		mode = c.GetAccessMode()
	}
	return &volumev1.Capability{AccessType: &volumev1.Capability_Block{Block: &volumev1.Capability_BlockVolume{}}, AccessMode: mode}
}

// toCSI maps the contract's capability to CSI's; block forces the block
// access type. Block volumes take no mount flags.
func toCSI(c *volumev1.Capability, block bool) *csi.VolumeCapability {
	if c == nil {
		c = defaultCapability()
	}
	out := &csi.VolumeCapability{AccessMode: &csi.VolumeCapability_AccessMode{Mode: accessModes[c.GetAccessMode()]}}
	if block || c.GetBlock() != nil {
		out.AccessType = &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}}
		return out
	}
	m := c.GetMount()
	out.AccessType = &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{
		FsType: m.GetFsType(), MountFlags: m.GetMountFlags(), VolumeMountGroup: m.GetVolumeMountGroup(),
	}}
	return out
}

// encodeCapability is c as the record keeps it.
func encodeCapability(c *volumev1.Capability) []byte {
	if c == nil {
		c = defaultCapability()
	}
	data, _ := protojson.Marshal(c)
	return data
}
