package volumetest_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/status"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk"
	"github.com/podhost/podhost/sdk/volumetest"
)

// grpcVolumes serves proto/volume/v1 itself (sdk.Plugin.Volume). Its
// midway field is the test hook the kit interrupts Stage and Publish at;
// in production it does nothing.
type grpcVolumes struct {
	volumev1.UnimplementedVolumeServer
	midway func(ctx context.Context)
}

func newGRPCVolumes() *grpcVolumes {
	return &grpcVolumes{midway: func(context.Context) {}}
}

func (s *grpcVolumes) Stage(ctx context.Context, req *volumev1.StageRequest) (*volumev1.StageResponse, error) {
	// … mount the volume on req.GetStagingPath(), then:
	s.midway(ctx)
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err() // CANCELLED or DEADLINE_EXCEEDED: uncertain
	}
	return &volumev1.StageResponse{}, nil
}

// A plugin that serves the Volume service itself points Setup.Midway at its
// hook; a plugin on sdk.Plugin.Volumes calls sdk.Midway and needs no more.
func ExampleSetup_midway() {
	conformance := func(t *testing.T) {
		volumetest.Run(t, func(t *testing.T) volumetest.Setup {
			s := newGRPCVolumes()
			return volumetest.Setup{
				Plugin: sdk.Plugin{Name: "volume-example", Version: "1.0.0", Kind: sdk.KindVolume, Volume: s},
				Midway: &s.midway,
			}
		})
	}
	_ = conformance // func TestConformance(t *testing.T) in the plugin's tests
}
