package main

import (
	"context"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// csiClient is a CO's view of a driver, for the tests.
type csiClient struct {
	csi.IdentityClient
	csi.ControllerClient
	csi.NodeClient
}

func dial(t *testing.T, endpoint string) csiClient {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return csiClient{csi.NewIdentityClient(conn), csi.NewControllerClient(conn), csi.NewNodeClient(conn)}
}

func mountCap(mode csi.VolumeCapability_AccessMode_Mode) *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode},
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
	}
}

var rwo = mountCap(csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER)

// createVolume creates a 64 MiB volume named name and returns its ID.
func (c csiClient) createVolume(t *testing.T, name string) string {
	t.Helper()
	resp, err := c.CreateVolume(t.Context(), &csi.CreateVolumeRequest{
		Name: name, VolumeCapabilities: []*csi.VolumeCapability{rwo},
		CapacityRange: &csi.CapacityRange{RequiredBytes: 64 << 20},
	})
	if err != nil {
		t.Fatalf("CreateVolume: %v", err)
	}
	return resp.GetVolume().GetVolumeId()
}

// wantCode fails unless err has the code.
func wantCode(t *testing.T, what string, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Fatalf("%s: code %s (%v), want %s", what, got, err, want)
	}
}

func (c csiClient) stage(ctx context.Context, id, staging string, vc *csi.VolumeCapability) error {
	_, err := c.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: vc})
	return err
}

func (c csiClient) publish(ctx context.Context, id, staging, target string, vc *csi.VolumeCapability, ro bool) error {
	_, err := c.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target, VolumeCapability: vc, Readonly: ro})
	return err
}

func (c csiClient) unpublish(ctx context.Context, id, target string) error {
	_, err := c.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target})
	return err
}

func (c csiClient) unstage(ctx context.Context, id, staging string) error {
	_, err := c.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging})
	return err
}
