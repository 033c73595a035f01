package volumetest

import (
	"context"

	"google.golang.org/grpc/codes"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// checkMissingArguments sends each call with one required argument empty.
func checkMissingArguments(k *kit) {
	v := k.setup.NewVolume(k.T)
	staging, target := k.stagingPath(), k.targetPath()
	c := k.vol
	stage := func(id, path string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := c.Stage(ctx, &volumev1.StageRequest{VolumeId: id, StagingPath: path, Capability: k.capability(v), VolumeContext: v.Context})
			return err
		}
	}
	unstage := func(id, path string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := c.Unstage(ctx, &volumev1.UnstageRequest{VolumeId: id, StagingPath: path})
			return err
		}
	}
	publish := func(id, stagingPath, targetPath string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := c.Publish(ctx, &volumev1.PublishRequest{VolumeId: id, StagingPath: stagingPath, TargetPath: targetPath, Capability: k.capability(v), VolumeContext: v.Context})
			return err
		}
	}
	unpublish := func(id, path string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := c.Unpublish(ctx, &volumev1.UnpublishRequest{VolumeId: id, TargetPath: path})
			return err
		}
	}
	stagingArg := ""
	if k.caps.GetStageUnstage() {
		stagingArg = staging
	}
	tests := []struct {
		name    string
		applies bool
		call    func(ctx context.Context) error
	}{
		{"Publish without volume_id", true, publish("", stagingArg, target)},
		{"Publish without target_path", true, publish(v.ID, stagingArg, "")},
		{"Unpublish without volume_id", true, unpublish("", target)},
		{"Unpublish without target_path", true, unpublish(v.ID, "")},
		{"Publish without staging_path", k.caps.GetStageUnstage(), publish(v.ID, "", target)},
		{"Stage without volume_id", k.caps.GetStageUnstage(), stage("", staging)},
		{"Stage without staging_path", k.caps.GetStageUnstage(), stage(v.ID, "")},
		{"Unstage without volume_id", k.caps.GetStageUnstage(), unstage("", staging)},
		{"Unstage without staging_path", k.caps.GetStageUnstage(), unstage(v.ID, "")},
		{"Attach without volume_id", k.caps.GetRequiresAttach(), func(ctx context.Context) error {
			_, err := c.Attach(ctx, &volumev1.AttachRequest{NodeId: "volumetest-node", VolumeContext: v.Context})
			return err
		}},
		{"Detach without volume_id", k.caps.GetRequiresAttach(), func(ctx context.Context) error {
			_, err := c.Detach(ctx, &volumev1.DetachRequest{NodeId: "volumetest-node", VolumeContext: v.Context})
			return err
		}},
		{"GetMetrics without volume_path", k.caps.GetSupportsMetrics(), func(ctx context.Context) error {
			_, err := c.GetMetrics(ctx, &volumev1.GetMetricsRequest{VolumeId: v.ID})
			return err
		}},
		{"UnmapBlock without volume_id", k.caps.GetBlock(), func(ctx context.Context) error {
			_, err := c.UnmapBlock(ctx, &volumev1.UnmapBlockRequest{TargetPath: target})
			return err
		}},
	}
	for _, tt := range tests {
		if tt.applies {
			k.wantCode(tt.name, tt.call(k.ctx()), codes.InvalidArgument)
		}
	}
	k.wantAbsent("after refused calls, target path", target)
}
