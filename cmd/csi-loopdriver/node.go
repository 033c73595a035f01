package main

import (
	"context"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// nodeServer is the CSI Node service; it checks the requests and leaves
// the work to the driver's node operations (nodeops.go).
type nodeServer struct {
	csi.UnimplementedNodeServer
	d *driver
}

// requiredSecretKey is the volume_context key naming a secret key that
// NodePublishVolume must be given (PERMISSION_DENIED without it), as a
// driver that authenticates its mounts asks for one.
const requiredSecretKey = "requiredSecret"

// required fails with errInvalid naming the first empty field.
func required(fields ...string) error {
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i+1] == "" {
			return fmt.Errorf("%s: required: %w", fields[i], errInvalid)
		}
	}
	return nil
}

func (s nodeServer) NodeStageVolume(ctx context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	if !s.d.cfg.stageUnstage {
		return nil, status.Error(codes.Unimplemented, "the driver is configured without STAGE_UNSTAGE_VOLUME")
	}
	if err := required("volume_id", req.GetVolumeId(), "staging_target_path", req.GetStagingTargetPath()); err != nil {
		return nil, grpcError(err)
	}
	c, err := parseCap("volume_capability", req.GetVolumeCapability())
	if err != nil {
		return nil, grpcError(err)
	}
	if err := s.d.stage(ctx, req.GetVolumeId(), req.GetStagingTargetPath(), c); err != nil {
		return nil, grpcError(err)
	}
	return &csi.NodeStageVolumeResponse{}, nil
}

func (s nodeServer) NodeUnstageVolume(ctx context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	if !s.d.cfg.stageUnstage {
		return nil, status.Error(codes.Unimplemented, "the driver is configured without STAGE_UNSTAGE_VOLUME")
	}
	if err := required("volume_id", req.GetVolumeId(), "staging_target_path", req.GetStagingTargetPath()); err != nil {
		return nil, grpcError(err)
	}
	if err := s.d.unstage(ctx, req.GetVolumeId(), req.GetStagingTargetPath()); err != nil {
		return nil, grpcError(err)
	}
	return &csi.NodeUnstageVolumeResponse{}, nil
}

func (s nodeServer) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	if err := required("volume_id", req.GetVolumeId(), "target_path", req.GetTargetPath()); err != nil {
		return nil, grpcError(err)
	}
	c, err := parseCap("volume_capability", req.GetVolumeCapability())
	if err != nil {
		return nil, grpcError(err)
	}
	if key := req.GetVolumeContext()[requiredSecretKey]; key != "" {
		if _, ok := req.GetSecrets()[key]; !ok {
			return nil, status.Errorf(codes.PermissionDenied, "the volume context's %s asks for secret %q, which the request does not have", requiredSecretKey, key)
		}
	}
	if req.GetVolumeContext()[ephemeralKey] == "true" {
		err = s.d.publishEphemeral(ctx, req.GetVolumeId(), req.GetStagingTargetPath(), req.GetTargetPath(), c, req.GetReadonly(), req.GetVolumeContext())
	} else {
		err = s.d.publish(ctx, req.GetVolumeId(), req.GetStagingTargetPath(), req.GetTargetPath(), c, req.GetReadonly(), false)
	}
	if err != nil {
		return nil, grpcError(err)
	}
	return &csi.NodePublishVolumeResponse{}, nil
}

func (s nodeServer) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	if err := required("volume_id", req.GetVolumeId(), "target_path", req.GetTargetPath()); err != nil {
		return nil, grpcError(err)
	}
	if err := s.d.unpublishAny(ctx, req.GetVolumeId(), req.GetTargetPath()); err != nil {
		return nil, grpcError(err)
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

func (s nodeServer) NodeGetVolumeStats(_ context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	if !s.d.cfg.volumeStats {
		return nil, status.Error(codes.Unimplemented, "the driver is configured without GET_VOLUME_STATS")
	}
	if err := required("volume_id", req.GetVolumeId(), "volume_path", req.GetVolumePath()); err != nil {
		return nil, grpcError(err)
	}
	st, err := s.d.stats(s.d.internalID(req.GetVolumeId()), req.GetVolumePath())
	if err != nil {
		return nil, grpcError(err)
	}
	if st.block {
		return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
			{Unit: csi.VolumeUsage_BYTES, Total: st.totalBytes},
		}}, nil
	}
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
		{Unit: csi.VolumeUsage_BYTES, Total: st.totalBytes, Available: st.availBytes, Used: st.usedBytes},
		{Unit: csi.VolumeUsage_INODES, Total: st.inodes, Available: st.inodesFree, Used: st.inodesUsed},
	}}, nil
}

func (s nodeServer) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	caps := []*csi.NodeServiceCapability{nodeCap(csi.NodeServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER)}
	if s.d.cfg.stageUnstage {
		caps = append(caps, nodeCap(csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME))
	}
	if s.d.cfg.volumeStats {
		caps = append(caps, nodeCap(csi.NodeServiceCapability_RPC_GET_VOLUME_STATS))
	}
	return &csi.NodeGetCapabilitiesResponse{Capabilities: caps}, nil
}

func nodeCap(t csi.NodeServiceCapability_RPC_Type) *csi.NodeServiceCapability {
	return &csi.NodeServiceCapability{Type: &csi.NodeServiceCapability_Rpc{
		Rpc: &csi.NodeServiceCapability_RPC{Type: t},
	}}
}

func (s nodeServer) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	resp := &csi.NodeGetInfoResponse{NodeId: s.d.cfg.nodeID, MaxVolumesPerNode: s.d.cfg.maxVolumes}
	if len(s.d.cfg.topology) > 0 {
		resp.AccessibleTopology = &csi.Topology{Segments: s.d.cfg.topology}
	}
	return resp, nil
}
