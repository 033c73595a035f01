package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk"
)

// TestProbeAndSecretErrorsAreTransient: a failure before the plugin
// attempted the call against the driver (its capability probe, reading
// the secrets) is transient under the contract's rule, whatever code the
// probe answered, so that the host changes no state: a restarted driver
// answering NodeGetCapabilities with INTERNAL after a NodeStage timeout
// must not make the device not-mounted and lose its NodeUnstage.
func TestProbeAndSecretErrorsAreTransient(t *testing.T) {
	f := newFakeDriver("d.csi", csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME)
	f.hook = func(_ context.Context, method string) error {
		if method == "NodeGetCapabilities" {
			return status.Error(codes.Internal, "driver restarting")
		}
		return nil
	}
	tp := newTestPlugin(t, startDrivers(t, f)...)
	_, stageErr := tp.Stage(ctx(t), tp.stageReq("d.csi", "vol"))
	_, unstageErr := tp.Unstage(ctx(t), &volumev1.UnstageRequest{Driver: "d.csi", VolumeId: "vol", StagingPath: tp.stagingPath("vol")})
	_, publishErr := tp.Publish(ctx(t), tp.publishReq("d.csi", "vol"))
	f.mu.Lock()
	f.hook = nil
	f.mu.Unlock()
	secrets := tp.stageReq("d.csi", "vol")
	secrets.SecretsDir = filepath.Join(t.TempDir(), "missing")
	_, secretsErr := tp.Stage(ctx(t), secrets)
	for name, err := range map[string]error{"Stage": stageErr, "Unstage": unstageErr, "Publish": publishErr, "Stage with unreadable secrets": secretsErr} {
		if got := sdk.ClassifyVolumeError(err); got != sdk.VolumeTransient {
			t.Errorf("%s: %v (%v); want transient", name, got, err)
		}
	}
	if n := f.count("NodeStageVolume") + f.count("NodeUnstageVolume") + f.count("NodePublishVolume"); n != 0 {
		t.Errorf("%d volume calls reached the driver; want none", n)
	}
}
