package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk"
	"github.com/podhost/podhost/sdk/mount"
)

// newPlugin describes volume-scratch to the SDK.
func newPlugin(version string) sdk.Plugin {
	s := newServer()
	return sdk.Plugin{
		Name:         "volume-scratch",
		Version:      version,
		Kind:         sdk.KindVolume,
		Capabilities: []string{sdk.CapVolumeMetrics},
		Volume:       s,
		Configure:    s.configure,
	}
}

// newServer returns a server whose volumes live under defaultRoot until
// Configure says otherwise.
func newServer() *server {
	s := &server{}
	s.config.Store(&config{Root: defaultRoot})
	s.scratch = &scratch{root: func() string { return s.config.Load().Root }, midway: func(context.Context) {}}
	return s
}

// defaultRoot is where volumes live when the config names no root.
const defaultRoot = "/var/lib/volume-scratch"

// config is volume-scratch's config.
type config struct {
	// Root is the directory that holds the volumes, one directory each.
	Root string `json:"root"`
}

// configure decodes the config into a fresh value and swaps it in only
// when it is valid.
func (s *server) configure(_ context.Context, raw json.RawMessage) []sdk.FieldError {
	c := config{Root: defaultRoot}
	errs := sdk.FieldErrors(sdk.DecodeConfig(raw, &c))
	if len(errs) == 0 && !filepath.IsAbs(c.Root) {
		errs.Addf("root", "want an absolute path, got %q", c.Root)
	}
	if len(errs) == 0 {
		s.config.Store(&c)
	}
	return errs
}

// server translates the Volume service to scratch calls and maps errors.
type server struct {
	volumev1.UnimplementedVolumeServer
	config  atomic.Pointer[config]
	scratch *scratch
}

func (s *server) GetCapabilities(context.Context, *volumev1.GetCapabilitiesRequest) (*volumev1.GetCapabilitiesResponse, error) {
	return &volumev1.GetCapabilitiesResponse{StageUnstage: true, SupportsMetrics: true}, nil
}

func (s *server) Stage(ctx context.Context, req *volumev1.StageRequest) (*volumev1.StageResponse, error) {
	if err := filesystemOnly(req.GetCapability()); err != nil {
		return nil, err
	}
	return reply(&volumev1.StageResponse{}, s.scratch.Stage(ctx, req.GetVolumeId(), req.GetStagingPath()))
}

func (s *server) Unstage(ctx context.Context, req *volumev1.UnstageRequest) (*volumev1.UnstageResponse, error) {
	return reply(&volumev1.UnstageResponse{}, s.scratch.Unstage(ctx, req.GetVolumeId(), req.GetStagingPath()))
}

func (s *server) Publish(ctx context.Context, req *volumev1.PublishRequest) (*volumev1.PublishResponse, error) {
	if err := filesystemOnly(req.GetCapability()); err != nil {
		return nil, err
	}
	err := s.scratch.Publish(ctx, req.GetVolumeId(), req.GetStagingPath(), req.GetTargetPath(), req.GetReadonly())
	return reply(&volumev1.PublishResponse{}, err)
}

func (s *server) Unpublish(ctx context.Context, req *volumev1.UnpublishRequest) (*volumev1.UnpublishResponse, error) {
	return reply(&volumev1.UnpublishResponse{}, s.scratch.Unpublish(ctx, req.GetVolumeId(), req.GetTargetPath()))
}

func (s *server) GetMetrics(ctx context.Context, req *volumev1.GetMetricsRequest) (*volumev1.GetMetricsResponse, error) {
	u, err := s.scratch.Metrics(ctx, req.GetVolumeId(), req.GetVolumePath())
	return reply(&volumev1.GetMetricsResponse{
		TotalBytes: u.TotalBytes, UsedBytes: u.UsedBytes, AvailableBytes: u.AvailableBytes,
		TotalInodes: u.TotalInodes, UsedInodes: u.UsedInodes, AvailableInodes: u.AvailableInodes,
	}, err)
}

// filesystemOnly refuses raw block volumes, which scratch cannot provide.
func filesystemOnly(c *volumev1.Capability) error {
	if c.GetBlock() != nil {
		return status.Error(codes.InvalidArgument, "volume-scratch provides filesystem volumes only")
	}
	return nil
}

// reply returns resp, or the gRPC status for err.
func reply[T any](resp *T, err error) (*T, error) {
	if err != nil {
		return nil, toStatus(err)
	}
	return resp, nil
}

// toStatus maps scratch errors to the contract's codes. Anything unexpected
// (a failed write, a full disk) is ABORTED: the call may have taken effect
// in part, and the host treats it as uncertain.
func toStatus(err error) error {
	code := codes.Aborted
	switch {
	case errors.Is(err, errInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, errNotStaged):
		code = codes.FailedPrecondition
	case errors.Is(err, errOtherVolume):
		code = codes.AlreadyExists
	case errors.Is(err, mount.ErrNotMounted):
		code = codes.NotFound
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	return status.Error(code, err.Error())
}
