package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/sdk"
)

const pluginName = "runtime-containerd"

// newPlugin describes runtime-containerd to the SDK.
func newPlugin(version string) sdk.Plugin {
	log := hclog.New(&hclog.LoggerOptions{Name: pluginName, Level: hclog.Info, Output: os.Stderr, JSONFormat: true})
	rt := newCRIRuntime(log)
	return sdk.Plugin{
		Name:         pluginName,
		Version:      version,
		Kind:         sdk.KindRuntime,
		Capabilities: []string{sdk.CapRuntimeEvents},
		Runtime:      &server{rt: rt},
		Configure:    rt.Configure,
		Probe:        rt.Probe,
		Logger:       log,
	}
}

// server translates the Runtime service to criRuntime calls and maps its
// errors to the contract's codes; it holds no logic.
type server struct {
	runtimev1.UnimplementedRuntimeServer
	rt *criRuntime
}

func (s *server) Version(ctx context.Context, _ *runtimev1.VersionRequest) (*runtimev1.VersionResponse, error) {
	v, err := s.rt.Version(ctx)
	return reply(&runtimev1.VersionResponse{RuntimeName: v.RuntimeName, RuntimeVersion: v.RuntimeVersion, RuntimeApiVersion: v.RuntimeAPIVersion}, err)
}

func (s *server) Status(ctx context.Context, _ *runtimev1.StatusRequest) (*runtimev1.StatusResponse, error) {
	conds, err := s.rt.Status(ctx)
	resp := &runtimev1.StatusResponse{}
	for _, c := range conds {
		resp.Conditions = append(resp.Conditions, &runtimev1.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
	}
	return reply(resp, err)
}

func (s *server) RunSandbox(ctx context.Context, req *runtimev1.RunSandboxRequest) (*runtimev1.RunSandboxResponse, error) {
	if req.GetConfig().GetMetadata() == nil {
		return nil, toStatus(fmt.Errorf("%w: a sandbox config with metadata is required", errInvalid))
	}
	spec := sandboxSpecFromProto(req.GetConfig())
	spec.RuntimeHandler = req.GetRuntimeHandler()
	id, err := s.rt.RunSandbox(ctx, spec)
	return reply(&runtimev1.RunSandboxResponse{SandboxId: id}, err)
}

func (s *server) StopSandbox(ctx context.Context, req *runtimev1.StopSandboxRequest) (*runtimev1.StopSandboxResponse, error) {
	return reply(&runtimev1.StopSandboxResponse{}, s.rt.StopSandbox(ctx, req.GetSandboxId()))
}

func (s *server) RemoveSandbox(ctx context.Context, req *runtimev1.RemoveSandboxRequest) (*runtimev1.RemoveSandboxResponse, error) {
	return reply(&runtimev1.RemoveSandboxResponse{}, s.rt.RemoveSandbox(ctx, req.GetSandboxId()))
}

func (s *server) SandboxStatus(ctx context.Context, req *runtimev1.SandboxStatusRequest) (*runtimev1.SandboxStatusResponse, error) {
	sb, err := s.rt.SandboxStatus(ctx, req.GetSandboxId())
	return reply(&runtimev1.SandboxStatusResponse{Sandbox: sandboxToProto(sb)}, err)
}

func (s *server) ListSandboxes(ctx context.Context, req *runtimev1.ListSandboxesRequest) (*runtimev1.ListSandboxesResponse, error) {
	f := req.GetFilter()
	list, err := s.rt.ListSandboxes(ctx, SandboxFilter{ID: f.GetId(), State: SandboxState(f.GetState()), Labels: f.GetLabelSelector()})
	resp := &runtimev1.ListSandboxesResponse{}
	for _, sb := range list {
		resp.Sandboxes = append(resp.Sandboxes, sandboxToProto(sb))
	}
	return reply(resp, err)
}

func (s *server) CreateContainer(ctx context.Context, req *runtimev1.CreateContainerRequest) (*runtimev1.CreateContainerResponse, error) {
	if req.GetConfig().GetMetadata() == nil {
		return nil, toStatus(fmt.Errorf("%w: a container config with metadata is required", errInvalid))
	}
	var pod *SandboxSpec
	if req.GetSandboxConfig() != nil {
		spec := sandboxSpecFromProto(req.GetSandboxConfig())
		pod = &spec
	}
	id, err := s.rt.CreateContainer(ctx, req.GetSandboxId(), containerSpecFromProto(req.GetConfig()), pod)
	return reply(&runtimev1.CreateContainerResponse{ContainerId: id}, err)
}

func (s *server) StartContainer(ctx context.Context, req *runtimev1.StartContainerRequest) (*runtimev1.StartContainerResponse, error) {
	return reply(&runtimev1.StartContainerResponse{}, s.rt.StartContainer(ctx, req.GetContainerId()))
}

func (s *server) StopContainer(ctx context.Context, req *runtimev1.StopContainerRequest) (*runtimev1.StopContainerResponse, error) {
	timeout := time.Duration(max(req.GetTimeoutSeconds(), 0)) * time.Second
	return reply(&runtimev1.StopContainerResponse{}, s.rt.StopContainer(ctx, req.GetContainerId(), timeout))
}

func (s *server) RemoveContainer(ctx context.Context, req *runtimev1.RemoveContainerRequest) (*runtimev1.RemoveContainerResponse, error) {
	return reply(&runtimev1.RemoveContainerResponse{}, s.rt.RemoveContainer(ctx, req.GetContainerId()))
}

func (s *server) ContainerStatus(ctx context.Context, req *runtimev1.ContainerStatusRequest) (*runtimev1.ContainerStatusResponse, error) {
	c, err := s.rt.ContainerStatus(ctx, req.GetContainerId())
	return reply(&runtimev1.ContainerStatusResponse{Container: containerToProto(c)}, err)
}

func (s *server) ListContainers(ctx context.Context, req *runtimev1.ListContainersRequest) (*runtimev1.ListContainersResponse, error) {
	f := req.GetFilter()
	list, err := s.rt.ListContainers(ctx, ContainerFilter{ID: f.GetId(), SandboxID: f.GetSandboxId(), State: ContainerState(f.GetState()), Labels: f.GetLabelSelector()})
	resp := &runtimev1.ListContainersResponse{}
	for _, c := range list {
		resp.Containers = append(resp.Containers, containerToProto(c))
	}
	return reply(resp, err)
}

func (s *server) UpdateContainerResources(ctx context.Context, req *runtimev1.UpdateContainerResourcesRequest) (*runtimev1.UpdateContainerResourcesResponse, error) {
	err := s.rt.UpdateContainerResources(ctx, req.GetContainerId(), resourcesFromProto(req.GetResources()))
	return reply(&runtimev1.UpdateContainerResourcesResponse{}, err)
}

func (s *server) UpdateSandboxResources(ctx context.Context, req *runtimev1.UpdateSandboxResourcesRequest) (*runtimev1.UpdateSandboxResourcesResponse, error) {
	err := s.rt.UpdateSandboxResources(ctx, req.GetSandboxId(), resourcesFromProto(req.GetResources()))
	return reply(&runtimev1.UpdateSandboxResourcesResponse{}, err)
}

var pullPoliciesFromProto = map[runtimev1.PullPolicy]PullPolicy{
	runtimev1.PullPolicy_PULL_POLICY_UNSPECIFIED:    PullDefault,
	runtimev1.PullPolicy_PULL_POLICY_IF_NOT_PRESENT: PullIfNotPresent,
	runtimev1.PullPolicy_PULL_POLICY_ALWAYS:         PullAlways,
	runtimev1.PullPolicy_PULL_POLICY_NEVER:          PullNever,
}

func (s *server) EnsureImage(ctx context.Context, req *runtimev1.EnsureImageRequest) (*runtimev1.EnsureImageResponse, error) {
	policy, ok := pullPoliciesFromProto[req.GetPullPolicy()]
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "unknown pull policy %v", req.GetPullPolicy())
	}
	var auths []RegistryAuth
	for _, a := range req.GetAuth() {
		auths = append(auths, RegistryAuth{Username: a.GetUsername(), Password: a.GetPassword(),
			IdentityToken: a.GetIdentityToken(), RegistryToken: a.GetRegistryToken(), ServerAddress: a.GetServerAddress()})
	}
	ref, pulled, err := s.rt.EnsureImage(ctx, req.GetImage(), policy, auths)
	return reply(&runtimev1.EnsureImageResponse{ImageRef: ref, Pulled: pulled}, err)
}

func (s *server) ImageStatus(ctx context.Context, req *runtimev1.ImageStatusRequest) (*runtimev1.ImageStatusResponse, error) {
	img, present, err := s.rt.ImageStatus(ctx, req.GetImage())
	resp := &runtimev1.ImageStatusResponse{Present: present}
	if present {
		resp.Image = imageToProto(img)
	}
	return reply(resp, err)
}

func (s *server) ListImages(ctx context.Context, _ *runtimev1.ListImagesRequest) (*runtimev1.ListImagesResponse, error) {
	list, err := s.rt.ListImages(ctx)
	resp := &runtimev1.ListImagesResponse{}
	for _, img := range list {
		resp.Images = append(resp.Images, imageToProto(img))
	}
	return reply(resp, err)
}

func (s *server) RemoveImage(ctx context.Context, req *runtimev1.RemoveImageRequest) (*runtimev1.RemoveImageResponse, error) {
	return reply(&runtimev1.RemoveImageResponse{}, s.rt.RemoveImage(ctx, req.GetImage()))
}

// Events streams state changes until the host cancels the call. The header
// goes out once the watcher has its first listing, so a caller that waits
// for it sees every later change.
func (s *server) Events(_ *runtimev1.EventsRequest, stream grpc.ServerStreamingServer[runtimev1.Event]) error {
	ctx := stream.Context()
	events, unsubscribe, err := s.rt.Subscribe(ctx)
	if err != nil {
		return toStatus(err)
	}
	defer unsubscribe()
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
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

// statusCodes maps the logic's errors to the contract's codes, in order.
var statusCodes = []struct {
	err  error
	code codes.Code
}{
	{errInvalid, codes.InvalidArgument},
	{errNotFound, codes.NotFound},
	{errPrecondition, codes.FailedPrecondition},
	{errUnavailable, codes.Unavailable},
	{errDeadline, codes.DeadlineExceeded},
	{context.DeadlineExceeded, codes.DeadlineExceeded},
	{errBackend, codes.Unknown},
}

// toStatus maps an error of the logic to the contract's code, keeping its
// message; anything unexpected is INTERNAL.
func toStatus(err error) error {
	for _, m := range statusCodes {
		if errors.Is(err, m.err) {
			return status.Error(m.code, err.Error())
		}
	}
	return status.Error(codes.Internal, err.Error())
}
