package main

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/sdk"
)

// newPlugin describes runtime-memory to the SDK.
func newPlugin(version string) sdk.Plugin {
	m := newMemory(time.Now)
	return sdk.Plugin{
		Name:         "runtime-memory",
		Version:      version,
		Kind:         sdk.KindRuntime,
		Capabilities: []string{sdk.CapRuntimeEvents},
		Runtime:      &server{m: m, version: version},
		Configure:    m.Configure,
	}
}

// server translates the Runtime service to memory calls and maps errors.
type server struct {
	runtimev1.UnimplementedRuntimeServer
	m       *memory
	version string
}

func (s *server) Version(context.Context, *runtimev1.VersionRequest) (*runtimev1.VersionResponse, error) {
	return &runtimev1.VersionResponse{RuntimeName: "memory", RuntimeVersion: s.version, RuntimeApiVersion: sdk.ContractVersion}, nil
}

func (s *server) Status(context.Context, *runtimev1.StatusRequest) (*runtimev1.StatusResponse, error) {
	return &runtimev1.StatusResponse{Conditions: []*runtimev1.Condition{
		{Type: "RuntimeReady", Status: true},
		{Type: "NetworkReady", Status: true},
	}}, nil
}

func (s *server) RunSandbox(ctx context.Context, req *runtimev1.RunSandboxRequest) (*runtimev1.RunSandboxResponse, error) {
	cfg := req.GetConfig()
	md := cfg.GetMetadata()
	id, err := s.m.RunSandbox(ctx, Sandbox{
		Name: md.GetName(), Namespace: md.GetNamespace(), UID: md.GetUid(), Attempt: md.GetAttempt(),
		LogDirectory: cfg.GetLogDirectory(), Labels: cfg.GetLabels(), Annotations: cfg.GetAnnotations(),
	})
	return reply(&runtimev1.RunSandboxResponse{SandboxId: id}, err)
}

func (s *server) StopSandbox(ctx context.Context, req *runtimev1.StopSandboxRequest) (*runtimev1.StopSandboxResponse, error) {
	return reply(&runtimev1.StopSandboxResponse{}, s.m.StopSandbox(ctx, req.GetSandboxId()))
}

func (s *server) RemoveSandbox(ctx context.Context, req *runtimev1.RemoveSandboxRequest) (*runtimev1.RemoveSandboxResponse, error) {
	return reply(&runtimev1.RemoveSandboxResponse{}, s.m.RemoveSandbox(ctx, req.GetSandboxId()))
}

func (s *server) SandboxStatus(ctx context.Context, req *runtimev1.SandboxStatusRequest) (*runtimev1.SandboxStatusResponse, error) {
	sb, err := s.m.SandboxStatus(ctx, req.GetSandboxId())
	return reply(&runtimev1.SandboxStatusResponse{Sandbox: sandboxToProto(sb)}, err)
}

func (s *server) ListSandboxes(ctx context.Context, req *runtimev1.ListSandboxesRequest) (*runtimev1.ListSandboxesResponse, error) {
	f := req.GetFilter()
	resp := &runtimev1.ListSandboxesResponse{}
	for _, sb := range s.m.ListSandboxes(ctx, Filter{ID: f.GetId(), State: int(f.GetState()), Labels: f.GetLabelSelector()}) {
		resp.Sandboxes = append(resp.Sandboxes, sandboxToProto(sb))
	}
	return resp, nil
}

func (s *server) CreateContainer(ctx context.Context, req *runtimev1.CreateContainerRequest) (*runtimev1.CreateContainerResponse, error) {
	cfg := req.GetConfig()
	id, err := s.m.CreateContainer(ctx, Container{
		SandboxID: req.GetSandboxId(), Name: cfg.GetMetadata().GetName(), Attempt: cfg.GetMetadata().GetAttempt(),
		Image: cfg.GetImage(), LogPath: cfg.GetLogPath(), Labels: cfg.GetLabels(), Annotations: cfg.GetAnnotations(),
	})
	return reply(&runtimev1.CreateContainerResponse{ContainerId: id}, err)
}

func (s *server) StartContainer(ctx context.Context, req *runtimev1.StartContainerRequest) (*runtimev1.StartContainerResponse, error) {
	return reply(&runtimev1.StartContainerResponse{}, s.m.StartContainer(ctx, req.GetContainerId()))
}

func (s *server) StopContainer(ctx context.Context, req *runtimev1.StopContainerRequest) (*runtimev1.StopContainerResponse, error) {
	timeout := time.Duration(req.GetTimeoutSeconds()) * time.Second
	return reply(&runtimev1.StopContainerResponse{}, s.m.StopContainer(ctx, req.GetContainerId(), timeout))
}

func (s *server) RemoveContainer(ctx context.Context, req *runtimev1.RemoveContainerRequest) (*runtimev1.RemoveContainerResponse, error) {
	return reply(&runtimev1.RemoveContainerResponse{}, s.m.RemoveContainer(ctx, req.GetContainerId()))
}

func (s *server) ContainerStatus(ctx context.Context, req *runtimev1.ContainerStatusRequest) (*runtimev1.ContainerStatusResponse, error) {
	c, err := s.m.ContainerStatus(ctx, req.GetContainerId())
	return reply(&runtimev1.ContainerStatusResponse{Container: containerToProto(c)}, err)
}

func (s *server) ListContainers(ctx context.Context, req *runtimev1.ListContainersRequest) (*runtimev1.ListContainersResponse, error) {
	f := req.GetFilter()
	resp := &runtimev1.ListContainersResponse{}
	for _, c := range s.m.ListContainers(ctx, Filter{ID: f.GetId(), SandboxID: f.GetSandboxId(), State: int(f.GetState()), Labels: f.GetLabelSelector()}) {
		resp.Containers = append(resp.Containers, containerToProto(c))
	}
	return resp, nil
}

func (s *server) ReopenContainerLog(ctx context.Context, req *runtimev1.ReopenContainerLogRequest) (*runtimev1.ReopenContainerLogResponse, error) {
	return reply(&runtimev1.ReopenContainerLogResponse{}, s.m.ReopenContainerLog(ctx, req.GetContainerId()))
}

var pullPolicies = map[runtimev1.PullPolicy]PullPolicy{
	runtimev1.PullPolicy_PULL_POLICY_UNSPECIFIED:    PullIfNotPresent,
	runtimev1.PullPolicy_PULL_POLICY_IF_NOT_PRESENT: PullIfNotPresent,
	runtimev1.PullPolicy_PULL_POLICY_ALWAYS:         PullAlways,
	runtimev1.PullPolicy_PULL_POLICY_NEVER:          PullNever,
}

func (s *server) EnsureImage(ctx context.Context, req *runtimev1.EnsureImageRequest) (*runtimev1.EnsureImageResponse, error) {
	policy, ok := pullPolicies[req.GetPullPolicy()]
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "unknown pull policy %v", req.GetPullPolicy())
	}
	ref, pulled, err := s.m.EnsureImage(ctx, req.GetImage(), policy)
	return reply(&runtimev1.EnsureImageResponse{ImageRef: ref, Pulled: pulled}, err)
}

func (s *server) ImageStatus(ctx context.Context, req *runtimev1.ImageStatusRequest) (*runtimev1.ImageStatusResponse, error) {
	img, present, err := s.m.ImageStatus(ctx, req.GetImage())
	resp := &runtimev1.ImageStatusResponse{Present: present}
	if present {
		resp.Image = imageToProto(img)
	}
	return reply(resp, err)
}

func (s *server) ListImages(ctx context.Context, _ *runtimev1.ListImagesRequest) (*runtimev1.ListImagesResponse, error) {
	resp := &runtimev1.ListImagesResponse{}
	for _, img := range s.m.ListImages(ctx) {
		resp.Images = append(resp.Images, imageToProto(img))
	}
	return resp, nil
}

func (s *server) RemoveImage(ctx context.Context, req *runtimev1.RemoveImageRequest) (*runtimev1.RemoveImageResponse, error) {
	return reply(&runtimev1.RemoveImageResponse{}, s.m.RemoveImage(ctx, req.GetImage()))
}

// Events streams state changes until the host cancels the call. The header
// is sent once the subscription exists, so a caller that waits for it sees
// every later change.
func (s *server) Events(_ *runtimev1.EventsRequest, stream grpc.ServerStreamingServer[runtimev1.Event]) error {
	events, cancel := s.m.events.Subscribe()
	defer cancel()
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	for {
		select {
		case <-stream.Context().Done():
			return nil
		case ev := <-events:
			if err := stream.Send(eventToProto(ev)); err != nil {
				return err
			}
		}
	}
}

// reply returns resp, or the gRPC status for err.
func reply[T any](resp *T, err error) (*T, error) {
	if err != nil {
		return nil, toStatus(err)
	}
	return resp, nil
}

// toStatus maps the runtime's errors to the contract's codes.
func toStatus(err error) error {
	code := codes.Internal
	switch {
	case errors.Is(err, errInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, errNotFound):
		code = codes.NotFound
	case errors.Is(err, errPrecondition):
		code = codes.FailedPrecondition
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	return status.Error(code, err.Error())
}
