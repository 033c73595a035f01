package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
)

// controllerServer is the CSI Controller service: volumes are sparse
// image files in the state dir. The driver serves one node, so every
// access mode works.
type controllerServer struct {
	csi.UnimplementedControllerServer
	d *driver
}

func (s controllerServer) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	v, err := s.d.createVolume(req)
	if err != nil {
		return nil, grpcError(err)
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: v.ID, CapacityBytes: v.CapacityBytes}}, nil
}

func (d *driver) createVolume(req *csi.CreateVolumeRequest) (volume, error) {
	if req.GetName() == "" {
		return volume{}, fmt.Errorf("name: required: %w", errInvalid)
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return volume{}, fmt.Errorf("volume_capabilities: required: %w", errInvalid)
	}
	for i, c := range req.GetVolumeCapabilities() {
		if _, err := parseCap(fmt.Sprintf("volume_capabilities[%d]", i), c); err != nil {
			return volume{}, err
		}
	}
	if req.GetVolumeContentSource() != nil {
		return volume{}, fmt.Errorf("volume_content_source: snapshots and clones are not supported: %w", errInvalid)
	}
	required, limit := req.GetCapacityRange().GetRequiredBytes(), req.GetCapacityRange().GetLimitBytes()
	size, err := capacityFor(required, limit, d.cfg.defaultVolumeSize)
	if err != nil {
		return volume{}, err
	}
	unlock, err := d.locks.lock(volumeID(req.GetName()))
	if err != nil {
		return volume{}, err
	}
	defer unlock()
	return d.vols.create(req.GetName(), size, required, limit)
}

func (s controllerServer) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	if err := s.d.deleteVolume(req.GetVolumeId()); err != nil {
		return nil, grpcError(err)
	}
	return &csi.DeleteVolumeResponse{}, nil
}

// deleteVolume removes the volume; an unknown one is already deleted. A
// volume still staged or published (or attached) is refused.
func (d *driver) deleteVolume(id string) error {
	if id == "" {
		return fmt.Errorf("volume_id: required: %w", errInvalid)
	}
	if !validID.MatchString(id) {
		return nil
	}
	unlock, err := d.locks.lock(id)
	if err != nil {
		return err
	}
	defer unlock()
	if _, ok, err := d.readRecord(id); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("volume %s is staged or published on the node: %w", id, errPrecondition)
	}
	if dev, err := d.loops.find(d.vols.imagePath(id)); err != nil {
		return err
	} else if dev != "" {
		return fmt.Errorf("volume %s is attached at %s: %w", id, dev, errPrecondition)
	}
	return d.vols.remove(id)
}

func (s controllerServer) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, grpcError(fmt.Errorf("volume_id: required: %w", errInvalid))
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, grpcError(fmt.Errorf("volume_capabilities: required: %w", errInvalid))
	}
	if _, err := s.d.vols.get(req.GetVolumeId()); err != nil {
		return nil, grpcError(err)
	}
	for i, c := range req.GetVolumeCapabilities() {
		if _, err := parseCap(fmt.Sprintf("volume_capabilities[%d]", i), c); err != nil {
			if errors.Is(err, errInvalid) {
				return &csi.ValidateVolumeCapabilitiesResponse{Message: err.Error()}, nil
			}
			return nil, grpcError(err)
		}
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext:      req.GetVolumeContext(),
		VolumeCapabilities: req.GetVolumeCapabilities(),
		Parameters:         req.GetParameters(),
	}}, nil
}

func (controllerServer) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{
		controllerCap(csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME),
		controllerCap(csi.ControllerServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER),
	}}, nil
}

func controllerCap(t csi.ControllerServiceCapability_RPC_Type) *csi.ControllerServiceCapability {
	return &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{
		Rpc: &csi.ControllerServiceCapability_RPC{Type: t},
	}}
}
