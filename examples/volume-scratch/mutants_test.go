package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/internal/testutil"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk/mount"
	"github.com/podhost/podhost/sdk/volumetest"
)

// The conformance kit must catch a plugin that breaks the contract. Each
// mutant is volume-scratch with one bug; TestKitCatchesMutants runs the kit
// against it in a child process (this test binary, re-executed) and expects
// the named subtest to fail.

// mutantEnv names the mutant TestMutantConformance serves.
const mutantEnv = "VOLUME_SCRATCH_MUTANT"

// rootEnv, when set, is the root of the volumes TestMutantConformance
// serves, for a parent test to look into after the child ended.
const rootEnv = "VOLUME_SCRATCH_ROOT"

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
			if m.staged(req.GetVolumeId(), req.GetStagingPath()) {
				return nil, status.Error(codes.AlreadyExists, "already staged")
			}
			return m.server.Stage(ctx, req)
		}
	}, CaughtBy: "Stage_twice_succeeds"},
	"unstage of nothing is NOT_FOUND": {Mutate: func(m *mutant) {
		m.unstage = func(ctx context.Context, req *volumev1.UnstageRequest) (*volumev1.UnstageResponse, error) {
			if mounted, _ := mount.IsMounted(req.GetStagingPath()); !mounted {
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
	"publish makes an empty directory": {Mutate: func(m *mutant) {
		m.publish = func(ctx context.Context, req *volumev1.PublishRequest) (*volumev1.PublishResponse, error) {
			if !m.staged(req.GetVolumeId(), req.GetStagingPath()) || req.GetTargetPath() == "" {
				return m.server.Publish(ctx, req)
			}
			return &volumev1.PublishResponse{}, os.MkdirAll(req.GetTargetPath(), 0o750)
		}
		m.unpublish = func(ctx context.Context, req *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error) {
			if req.GetVolumeId() == "" || req.GetTargetPath() == "" {
				return m.server.Unpublish(ctx, req)
			}
			return &volumev1.UnpublishResponse{}, os.RemoveAll(req.GetTargetPath())
		}
	}, CaughtBy: "data_written_through_a_target_is_in_the_volume"},
	"publish ignores readonly": {Mutate: func(m *mutant) {
		m.publish = func(ctx context.Context, req *volumev1.PublishRequest) (*volumev1.PublishResponse, error) {
			req.Readonly = false
			return m.server.Publish(ctx, req)
		}
	}, CaughtBy: "a_read-only_target_refuses_writes"},
	"unstage trusts its record of stages": {Mutate: func(m *mutant) {
		done := newRecord()
		m.stage = func(ctx context.Context, req *volumev1.StageRequest) (*volumev1.StageResponse, error) {
			return add[volumev1.StageResponse](done, req.GetStagingPath())(m.server.Stage(ctx, req))
		}
		m.unstage = func(ctx context.Context, req *volumev1.UnstageRequest) (*volumev1.UnstageResponse, error) {
			if !done.has(req.GetStagingPath()) && req.GetVolumeId() != "" && req.GetStagingPath() != "" {
				return &volumev1.UnstageResponse{}, nil
			}
			return m.server.Unstage(ctx, req)
		}
	}, CaughtBy: "an_interrupted_Stage_is_undone_by_Unstage"},
	"unpublish trusts its record of publishes": {Mutate: func(m *mutant) {
		done := newRecord()
		m.publish = func(ctx context.Context, req *volumev1.PublishRequest) (*volumev1.PublishResponse, error) {
			return add[volumev1.PublishResponse](done, req.GetTargetPath())(m.server.Publish(ctx, req))
		}
		m.unpublish = func(ctx context.Context, req *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error) {
			if !done.has(req.GetTargetPath()) && req.GetVolumeId() != "" && req.GetTargetPath() != "" {
				return &volumev1.UnpublishResponse{}, nil
			}
			return m.server.Unpublish(ctx, req)
		}
	}, CaughtBy: "an_interrupted_Publish_is_undone_by_Unpublish"},
	"unpublish fails": {Mutate: func(m *mutant) {
		m.unpublish = func(context.Context, *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error) {
			return nil, status.Error(codes.Aborted, "unpublish fails")
		}
	}, CaughtBy: "round_trip"},
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

// staged reports whether volume id is staged at stagingPath.
func (m *mutant) staged(id, stagingPath string) bool {
	dir, err := m.scratch.dir(id)
	_, ours, _ := mount.MountedFrom(stagingPath, dir)
	return err == nil && ours
}

// record is the paths a mutant's calls succeeded on.
type record struct {
	mu    *sync.Mutex
	paths map[string]bool
}

func newRecord() record { return record{mu: &sync.Mutex{}, paths: map[string]bool{}} }

// add returns a function that records path when the call it is given
// succeeded and passes the call's answer on.
func add[T any](r record, path string) func(*T, error) (*T, error) {
	return func(resp *T, err error) (*T, error) {
		if err == nil {
			r.mu.Lock()
			r.paths[path] = true
			r.mu.Unlock()
		}
		return resp, err
	}
}

func (r record) has(path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paths[path]
}

func TestMutantConformance(t *testing.T) {
	mu := testutil.ServedMutant(t, mutantEnv, mutants)
	volumetest.Run(t, func(t *testing.T) volumetest.Setup {
		setup, s := setup(t)
		m := &mutant{server: s}
		if mu.Mutate != nil {
			mu.Mutate(m)
		}
		if m.caps != nil && !m.caps.GetSupportsMetrics() {
			setup.Plugin.Capabilities = []string{}
		}
		setup.Plugin.Volume = m
		if root := os.Getenv(rootEnv); root != "" {
			setup.Config = fmt.Sprintf(`{"root": %q}`, root)
		}
		return setup
	})
}

func TestKitCatchesMutants(t *testing.T) {
	testutil.KitCatchesMutants(t, mutantEnv, "TestMutantConformance", mutants)
}

// TestKitUnmountsBeforeCleanup runs the kit's round trip against a plugin
// whose Unpublish fails, which leaves the target and staging paths
// mounted, and checks that the kit unmounted them before it removed its
// directory: what the round trip wrote is still in the volume.
func TestKitUnmountsBeforeCleanup(t *testing.T) {
	root := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMutantConformance$/^round_trip$", "-test.v")
	cmd.Env = append(os.Environ(), mutantEnv+"=unpublish fails", rootEnv+"="+root)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the kit passed a plugin whose Unpublish fails; want it to fail\n%s", out)
	}
	if bytes.Contains(out, []byte("RemoveAll cleanup")) {
		t.Errorf("the kit's cleanup could not remove its directory\n%s", out)
	}
	written, err := filepath.Glob(filepath.Join(root, "*", "volumetest"))
	if err != nil || len(written) != 1 {
		t.Errorf("files the round trip wrote into the volume: got %v, %v; want one, kept by the kit's cleanup\n%s", written, err, out)
	}
}
