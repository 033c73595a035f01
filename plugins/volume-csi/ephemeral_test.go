package main

import (
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// TestInlineEphemeralPublishesWithoutStaging: an inline CSI volume (its
// context says csi.storage.k8s.io/ephemeral "true") is published without
// a staging path even by a driver that stages, as the kubelet does; a
// persistent volume without a staging path stays refused.
func TestInlineEphemeralPublishesWithoutStaging(t *testing.T) {
	f := newFakeDriver("d.csi", csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME)
	tp := newTestPlugin(t, startDrivers(t, f)...)
	inline := &volumev1.PublishRequest{Driver: "d.csi", VolumeId: "csi-0123", TargetPath: tp.targetPath("inline"),
		VolumeContext: map[string]string{"size": "64Mi", "csi.storage.k8s.io/ephemeral": "true"}}
	_, err := tp.Publish(ctx(t), inline)
	wantCode(t, "Publish of an inline volume", err, codes.OK)
	pub, _ := f.last("NodePublishVolume").(*csi.NodePublishVolumeRequest)
	if pub.GetStagingTargetPath() != "" || pub.GetVolumeContext()["csi.storage.k8s.io/ephemeral"] != "true" || pub.GetVolumeContext()["size"] != "64Mi" {
		t.Errorf("NodePublishVolume %v; want no staging path and the context with the ephemeral key", pub)
	}
	if n := f.count("NodeStageVolume"); n != 0 {
		t.Errorf("%d NodeStageVolume calls; want none", n)
	}
	_, err = tp.Publish(ctx(t), &volumev1.PublishRequest{Driver: "d.csi", VolumeId: "pv-vol", TargetPath: tp.targetPath("pv")})
	wantCode(t, "Publish of a persistent volume without staging path", err, codes.InvalidArgument)
}
