package runtimetestfake

import (
	"context"

	"google.golang.org/grpc"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// Direct returns a client that calls f's methods in the caller's
// goroutine, without gRPC: for tests under testing/synctest, whose bubbles
// cannot hold gRPC's goroutines. Call options are ignored; Events is not
// served (it panics).
func Direct(f *Fake) runtimev1.RuntimeClient { return direct{f: f} }

type direct struct {
	runtimev1.RuntimeClient // nil: only Events, which the fake does not serve
	f                       *Fake
}

func (d direct) Version(ctx context.Context, req *runtimev1.VersionRequest, _ ...grpc.CallOption) (*runtimev1.VersionResponse, error) {
	return d.f.Version(ctx, req)
}

func (d direct) Status(ctx context.Context, req *runtimev1.StatusRequest, _ ...grpc.CallOption) (*runtimev1.StatusResponse, error) {
	return d.f.Status(ctx, req)
}

func (d direct) RunSandbox(ctx context.Context, req *runtimev1.RunSandboxRequest, _ ...grpc.CallOption) (*runtimev1.RunSandboxResponse, error) {
	return d.f.RunSandbox(ctx, req)
}

func (d direct) StopSandbox(ctx context.Context, req *runtimev1.StopSandboxRequest, _ ...grpc.CallOption) (*runtimev1.StopSandboxResponse, error) {
	return d.f.StopSandbox(ctx, req)
}

func (d direct) RemoveSandbox(ctx context.Context, req *runtimev1.RemoveSandboxRequest, _ ...grpc.CallOption) (*runtimev1.RemoveSandboxResponse, error) {
	return d.f.RemoveSandbox(ctx, req)
}

func (d direct) SandboxStatus(ctx context.Context, req *runtimev1.SandboxStatusRequest, _ ...grpc.CallOption) (*runtimev1.SandboxStatusResponse, error) {
	return d.f.SandboxStatus(ctx, req)
}

func (d direct) ListSandboxes(ctx context.Context, req *runtimev1.ListSandboxesRequest, _ ...grpc.CallOption) (*runtimev1.ListSandboxesResponse, error) {
	return d.f.ListSandboxes(ctx, req)
}

func (d direct) CreateContainer(ctx context.Context, req *runtimev1.CreateContainerRequest, _ ...grpc.CallOption) (*runtimev1.CreateContainerResponse, error) {
	return d.f.CreateContainer(ctx, req)
}

func (d direct) StartContainer(ctx context.Context, req *runtimev1.StartContainerRequest, _ ...grpc.CallOption) (*runtimev1.StartContainerResponse, error) {
	return d.f.StartContainer(ctx, req)
}

func (d direct) StopContainer(ctx context.Context, req *runtimev1.StopContainerRequest, _ ...grpc.CallOption) (*runtimev1.StopContainerResponse, error) {
	return d.f.StopContainer(ctx, req)
}

func (d direct) RemoveContainer(ctx context.Context, req *runtimev1.RemoveContainerRequest, _ ...grpc.CallOption) (*runtimev1.RemoveContainerResponse, error) {
	return d.f.RemoveContainer(ctx, req)
}

func (d direct) ContainerStatus(ctx context.Context, req *runtimev1.ContainerStatusRequest, _ ...grpc.CallOption) (*runtimev1.ContainerStatusResponse, error) {
	return d.f.ContainerStatus(ctx, req)
}

func (d direct) ListContainers(ctx context.Context, req *runtimev1.ListContainersRequest, _ ...grpc.CallOption) (*runtimev1.ListContainersResponse, error) {
	return d.f.ListContainers(ctx, req)
}

func (d direct) EnsureImage(ctx context.Context, req *runtimev1.EnsureImageRequest, _ ...grpc.CallOption) (*runtimev1.EnsureImageResponse, error) {
	return d.f.EnsureImage(ctx, req)
}

func (d direct) ImageStatus(ctx context.Context, req *runtimev1.ImageStatusRequest, _ ...grpc.CallOption) (*runtimev1.ImageStatusResponse, error) {
	return d.f.ImageStatus(ctx, req)
}

func (d direct) ListImages(ctx context.Context, req *runtimev1.ListImagesRequest, _ ...grpc.CallOption) (*runtimev1.ListImagesResponse, error) {
	return d.f.ListImages(ctx, req)
}

func (d direct) RemoveImage(ctx context.Context, req *runtimev1.RemoveImageRequest, _ ...grpc.CallOption) (*runtimev1.RemoveImageResponse, error) {
	return d.f.RemoveImage(ctx, req)
}

func (d direct) UpdateContainerResources(ctx context.Context, req *runtimev1.UpdateContainerResourcesRequest, _ ...grpc.CallOption) (*runtimev1.UpdateContainerResourcesResponse, error) {
	return d.f.UpdateContainerResources(ctx, req)
}

func (d direct) UpdateSandboxResources(ctx context.Context, req *runtimev1.UpdateSandboxResourcesRequest, _ ...grpc.CallOption) (*runtimev1.UpdateSandboxResourcesResponse, error) {
	return d.f.UpdateSandboxResources(ctx, req)
}
