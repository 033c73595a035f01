package main

import (
	"context"
	"os"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/internal/testutil"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk/volumetest"
)

// The conformance kit must catch a plugin that breaks the contract. Each
// mutant is volume-scratch with one bug; TestKitCatchesMutants runs the kit
// against it in a child process (this test binary, re-executed) and expects
// the named subtest to fail.

// mutantEnv names the mutant TestMutantConformance serves.
const mutantEnv = "VOLUME_SCRATCH_MUTANT"

// mutant is volume-scratch with some calls replaced.
type mutant struct {
	*server
	caps      *volumev1.GetCapabilitiesResponse
	stage     func(context.Context, *volumev1.StageRequest) (*volumev1.StageResponse, error)
	unstage   func(context.Context, *volumev1.UnstageRequest) (*volumev1.UnstageResponse, error)
	publish   func(context.Context, *volumev1.PublishRequest) (*volumev1.PublishResponse, error)
	unpublish func(context.Context, *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error)
	metrics   func(context.Context, *volumev1.GetMetricsRequest) (*volumev1.GetMetricsResponse, error)
}

func (m *mutant) GetCapabilities(ctx context.Context, req *volumev1.GetCapabilitiesRequest) (*volumev1.GetCapabilitiesResponse, error) {
	if m.caps != nil {
		return m.caps, nil
	}
	return m.server.GetCapabilities(ctx, req)
}

func (m *mutant) Stage(ctx context.Context, req *volumev1.StageRequest) (*volumev1.StageResponse, error) {
	if m.stage != nil {
		return m.stage(ctx, req)
	}
	return m.server.Stage(ctx, req)
}

func (m *mutant) Unstage(ctx context.Context, req *volumev1.UnstageRequest) (*volumev1.UnstageResponse, error) {
	if m.unstage != nil {
		return m.unstage(ctx, req)
	}
	return m.server.Unstage(ctx, req)
}

func (m *mutant) Publish(ctx context.Context, req *volumev1.PublishRequest) (*volumev1.PublishResponse, error) {
	if m.publish != nil {
		return m.publish(ctx, req)
	}
	return m.server.Publish(ctx, req)
}

func (m *mutant) Unpublish(ctx context.Context, req *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error) {
	if m.unpublish != nil {
		return m.unpublish(ctx, req)
	}
	return m.server.Unpublish(ctx, req)
}

func (m *mutant) GetMetrics(ctx context.Context, req *volumev1.GetMetricsRequest) (*volumev1.GetMetricsResponse, error) {
	if m.metrics != nil {
		return m.metrics(ctx, req)
	}
	return m.server.GetMetrics(ctx, req)
}

// mutants maps a bug to the mutant and the kit subtest that must catch it.
var mutants = map[string]testutil.Mutant[*mutant]{
	"second stage refused": {Mutate: func(m *mutant) {
		m.stage = func(ctx context.Context, req *volumev1.StageRequest) (*volumev1.StageResponse, error) {
			if id, _ := stagedID(req.GetStagingPath()); id == req.GetVolumeId() {
				return nil, status.Error(codes.AlreadyExists, "already staged")
			}
			return m.server.Stage(ctx, req)
		}
	}, CaughtBy: "Stage_twice_succeeds"},
	"unstage of nothing is NOT_FOUND": {Mutate: func(m *mutant) {
		m.unstage = func(ctx context.Context, req *volumev1.UnstageRequest) (*volumev1.UnstageResponse, error) {
			if id, _ := stagedID(req.GetStagingPath()); id == "" {
				return nil, status.Error(codes.NotFound, "not staged")
			}
			return m.server.Unstage(ctx, req)
		}
	}, CaughtBy: "Unstage_of_a_never-staged_volume_succeeds"},
	"publish without stage": {Mutate: func(m *mutant) {
		m.publish = func(_ context.Context, req *volumev1.PublishRequest) (*volumev1.PublishResponse, error) {
			return &volumev1.PublishResponse{}, os.MkdirAll(req.GetTargetPath(), 0o750)
		}
	}, CaughtBy: "Publish_before_Stage_is_FAILED_PRECONDITION"},
	"unpublish keeps the target": {Mutate: func(m *mutant) {
		m.unpublish = func(context.Context, *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error) {
			return &volumev1.UnpublishResponse{}, nil
		}
	}, CaughtBy: "round_trip"},
	"empty volume id accepted": {Mutate: func(m *mutant) {
		m.unpublish = func(ctx context.Context, req *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error) {
			req.VolumeId = "anything"
			return m.server.Unpublish(ctx, req)
		}
	}, CaughtBy: "missing_arguments_are_INVALID_ARGUMENT"},
	"code outside the contract": {Mutate: func(m *mutant) {
		m.metrics = func(context.Context, *volumev1.GetMetricsRequest) (*volumev1.GetMetricsResponse, error) {
			return nil, status.Error(codes.OutOfRange, "no such volume")
		}
	}, CaughtBy: "GetMetrics_of_an_unknown_path_is_NOT_FOUND"},
	"used more than total": {Mutate: func(m *mutant) {
		m.metrics = func(context.Context, *volumev1.GetMetricsRequest) (*volumev1.GetMetricsResponse, error) {
			return &volumev1.GetMetricsResponse{TotalBytes: 10, UsedBytes: 8, AvailableBytes: 8}, nil
		}
	}, CaughtBy: "GetMetrics_reports_sane_usage"},
	"metrics served without the capability": {Mutate: func(m *mutant) {
		m.caps = &volumev1.GetCapabilitiesResponse{StageUnstage: true}
	}, CaughtBy: "GetMetrics_is_UNIMPLEMENTED_without_supports_metrics"},
}

func TestMutantConformance(t *testing.T) {
	mu := testutil.ServedMutant(t, mutantEnv, mutants)
	volumetest.Run(t, func(t *testing.T) volumetest.Setup {
		p := newPlugin("test")
		m := &mutant{server: p.Volume.(*server)}
		if mu.Mutate != nil {
			mu.Mutate(m)
		}
		if m.caps != nil && !m.caps.GetSupportsMetrics() {
			p.Capabilities = []string{}
		}
		p.Volume = m
		return volumetest.Setup{Plugin: p}
	})
}

func TestKitCatchesMutants(t *testing.T) {
	testutil.KitCatchesMutants(t, mutantEnv, "TestMutantConformance", mutants)
}
