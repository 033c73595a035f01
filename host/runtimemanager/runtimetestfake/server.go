package runtimetestfake

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func (f *Fake) Version(ctx context.Context, req *runtimev1.VersionRequest) (*runtimev1.VersionResponse, error) {
	return do(f, ctx, "Version", req, func() (*runtimev1.VersionResponse, error) {
		return &runtimev1.VersionResponse{RuntimeName: "fake", RuntimeVersion: "0", RuntimeApiVersion: "v1"}, nil
	})
}

func (f *Fake) Status(ctx context.Context, req *runtimev1.StatusRequest) (*runtimev1.StatusResponse, error) {
	return do(f, ctx, "Status", req, func() (*runtimev1.StatusResponse, error) {
		return &runtimev1.StatusResponse{Conditions: []*runtimev1.Condition{
			{Type: "RuntimeReady", Status: true},
			{Type: "NetworkReady", Status: f.networkReady},
		}}, nil
	})
}

func (f *Fake) RunSandbox(ctx context.Context, req *runtimev1.RunSandboxRequest) (*runtimev1.RunSandboxResponse, error) {
	return do(f, ctx, "RunSandbox", req, func() (*runtimev1.RunSandboxResponse, error) {
		cfg := req.GetConfig()
		md := cfg.GetMetadata()
		if md.GetName() == "" || md.GetUid() == "" {
			return nil, invalid("sandbox metadata needs a name and a uid")
		}
		id := f.newID("sandbox")
		f.sandboxes[id] = &runtimev1.Sandbox{
			Id: id, Metadata: proto.Clone(md).(*runtimev1.SandboxMetadata),
			State:     runtimev1.SandboxState_SANDBOX_STATE_READY,
			CreatedAt: f.stamp(), Labels: cfg.GetLabels(), Annotations: cfg.GetAnnotations(),
		}
		if !cfg.GetHostNetwork() {
			f.sandboxes[id].Ip = "10.0.0." + id[len("sandbox-"):]
		}
		f.sandboxLogs[id] = cfg.GetLogDirectory()
		if pc := cfg.GetPodCgroup(); pc != nil && (pc.GetRequired() || !f.RequiredPodCgroupsOnly) {
			f.podCgroups[id] = true
		}
		return &runtimev1.RunSandboxResponse{SandboxId: id}, nil
	})
}

func (f *Fake) StopSandbox(ctx context.Context, req *runtimev1.StopSandboxRequest) (*runtimev1.StopSandboxResponse, error) {
	return do(f, ctx, "StopSandbox", req, func() (*runtimev1.StopSandboxResponse, error) {
		if req.GetSandboxId() == "" {
			return nil, invalid("sandbox id is empty")
		}
		f.stopSandbox(req.GetSandboxId())
		return &runtimev1.StopSandboxResponse{}, nil
	})
}

func (f *Fake) RemoveSandbox(ctx context.Context, req *runtimev1.RemoveSandboxRequest) (*runtimev1.RemoveSandboxResponse, error) {
	return do(f, ctx, "RemoveSandbox", req, func() (*runtimev1.RemoveSandboxResponse, error) {
		id := req.GetSandboxId()
		if id == "" {
			return nil, invalid("sandbox id is empty")
		}
		f.stopSandbox(id)
		for cid, c := range f.containers {
			if c.GetSandboxId() == id {
				delete(f.containers, cid)
			}
		}
		delete(f.sandboxes, id)
		delete(f.sandboxLogs, id)
		return &runtimev1.RemoveSandboxResponse{}, nil
	})
}

func (f *Fake) SandboxStatus(ctx context.Context, req *runtimev1.SandboxStatusRequest) (*runtimev1.SandboxStatusResponse, error) {
	return do(f, ctx, "SandboxStatus", req, func() (*runtimev1.SandboxStatusResponse, error) {
		if req.GetSandboxId() == "" {
			return nil, invalid("sandbox id is empty")
		}
		sb, ok := f.sandboxes[req.GetSandboxId()]
		if !ok {
			return nil, notFound("sandbox %q", req.GetSandboxId())
		}
		return &runtimev1.SandboxStatusResponse{Sandbox: proto.Clone(sb).(*runtimev1.Sandbox)}, nil
	})
}

func (f *Fake) ListSandboxes(ctx context.Context, req *runtimev1.ListSandboxesRequest) (*runtimev1.ListSandboxesResponse, error) {
	return do(f, ctx, "ListSandboxes", req, func() (*runtimev1.ListSandboxesResponse, error) {
		return &runtimev1.ListSandboxesResponse{Sandboxes: f.listSandboxes(req.GetFilter())}, nil
	})
}

func (f *Fake) CreateContainer(ctx context.Context, req *runtimev1.CreateContainerRequest) (*runtimev1.CreateContainerResponse, error) {
	return do(f, ctx, "CreateContainer", req, func() (*runtimev1.CreateContainerResponse, error) {
		cfg := req.GetConfig()
		switch {
		case req.GetSandboxId() == "":
			return nil, invalid("sandbox id is empty")
		case cfg.GetMetadata().GetName() == "":
			return nil, invalid("container metadata needs a name")
		case cfg.GetImage() == "":
			return nil, invalid("container image is empty")
		}
		if _, ok := f.sandboxes[req.GetSandboxId()]; !ok {
			return nil, notFound("sandbox %q", req.GetSandboxId())
		}
		ref, ok := f.imageRef(cfg.GetImage())
		if !ok {
			return nil, notFound("image %q", cfg.GetImage())
		}
		id := f.newID("container")
		f.containers[id] = &runtimev1.Container{
			Id: id, SandboxId: req.GetSandboxId(),
			Metadata: proto.Clone(cfg.GetMetadata()).(*runtimev1.ContainerMetadata),
			State:    runtimev1.ContainerState_CONTAINER_STATE_CREATED,
			Image:    cfg.GetImage(), ImageRef: ref, CreatedAt: f.stamp(),
			Labels: cfg.GetLabels(), Annotations: cfg.GetAnnotations(),
			LogPath: logPath(f.sandboxLogs[req.GetSandboxId()], cfg.GetLogPath()),
		}
		return &runtimev1.CreateContainerResponse{ContainerId: id}, nil
	})
}

func (f *Fake) StartContainer(ctx context.Context, req *runtimev1.StartContainerRequest) (*runtimev1.StartContainerResponse, error) {
	return do(f, ctx, "StartContainer", req, func() (*runtimev1.StartContainerResponse, error) {
		if req.GetContainerId() == "" {
			return nil, invalid("container id is empty")
		}
		c, ok := f.containers[req.GetContainerId()]
		if !ok {
			return nil, notFound("container %q", req.GetContainerId())
		}
		switch {
		case c.GetState() == runtimev1.ContainerState_CONTAINER_STATE_RUNNING:
		case c.GetState() == runtimev1.ContainerState_CONTAINER_STATE_EXITED:
			return nil, status.Errorf(codes.FailedPrecondition, "container %q has exited", c.GetId())
		case f.sandboxes[c.GetSandboxId()].GetState() != runtimev1.SandboxState_SANDBOX_STATE_READY:
			return nil, status.Errorf(codes.FailedPrecondition, "sandbox of container %q is stopped", c.GetId())
		default:
			c.State, c.StartedAt = runtimev1.ContainerState_CONTAINER_STATE_RUNNING, f.stamp()
		}
		return &runtimev1.StartContainerResponse{}, nil
	})
}

// StopContainer exits a container: with 137 when the timeout is 0, with 0
// (it honoured SIGTERM) otherwise.
func (f *Fake) StopContainer(ctx context.Context, req *runtimev1.StopContainerRequest) (*runtimev1.StopContainerResponse, error) {
	return do(f, ctx, "StopContainer", req, func() (*runtimev1.StopContainerResponse, error) {
		if req.GetContainerId() == "" {
			return nil, invalid("container id is empty")
		}
		if c, ok := f.containers[req.GetContainerId()]; ok {
			if req.GetTimeoutSeconds() == 0 {
				f.exit(c, 137, "Killed")
			} else {
				f.exit(c, 0, "Completed")
			}
		}
		return &runtimev1.StopContainerResponse{}, nil
	})
}

func (f *Fake) RemoveContainer(ctx context.Context, req *runtimev1.RemoveContainerRequest) (*runtimev1.RemoveContainerResponse, error) {
	return do(f, ctx, "RemoveContainer", req, func() (*runtimev1.RemoveContainerResponse, error) {
		if req.GetContainerId() == "" {
			return nil, invalid("container id is empty")
		}
		delete(f.containers, req.GetContainerId())
		return &runtimev1.RemoveContainerResponse{}, nil
	})
}

func (f *Fake) ContainerStatus(ctx context.Context, req *runtimev1.ContainerStatusRequest) (*runtimev1.ContainerStatusResponse, error) {
	return do(f, ctx, "ContainerStatus", req, func() (*runtimev1.ContainerStatusResponse, error) {
		if req.GetContainerId() == "" {
			return nil, invalid("container id is empty")
		}
		c, ok := f.containers[req.GetContainerId()]
		if !ok {
			return nil, notFound("container %q", req.GetContainerId())
		}
		return &runtimev1.ContainerStatusResponse{Container: proto.Clone(c).(*runtimev1.Container)}, nil
	})
}

func (f *Fake) ListContainers(ctx context.Context, req *runtimev1.ListContainersRequest) (*runtimev1.ListContainersResponse, error) {
	return do(f, ctx, "ListContainers", req, func() (*runtimev1.ListContainersResponse, error) {
		return &runtimev1.ListContainersResponse{Containers: f.listContainers(req.GetFilter())}, nil
	})
}

// EnsureImage pretends to pull any image outside the ".invalid" domain.
func (f *Fake) EnsureImage(ctx context.Context, req *runtimev1.EnsureImageRequest) (*runtimev1.EnsureImageResponse, error) {
	return do(f, ctx, "EnsureImage", req, func() (*runtimev1.EnsureImageResponse, error) {
		image := req.GetImage()
		if image == "" {
			return nil, invalid("image is empty")
		}
		ref, present := f.imageRef(image)
		policy := req.GetPullPolicy()
		if present && policy != runtimev1.PullPolicy_PULL_POLICY_ALWAYS {
			return &runtimev1.EnsureImageResponse{ImageRef: ref}, nil
		}
		if policy == runtimev1.PullPolicy_PULL_POLICY_NEVER {
			return nil, notFound("image %q is absent and the pull policy is Never", image)
		}
		if unpullable(image) {
			return nil, notFound("pulling image %q", image)
		}
		ref = referenceOf(image)
		f.images[image] = ref
		return &runtimev1.EnsureImageResponse{ImageRef: ref, Pulled: true}, nil
	})
}

func (f *Fake) ImageStatus(ctx context.Context, req *runtimev1.ImageStatusRequest) (*runtimev1.ImageStatusResponse, error) {
	return do(f, ctx, "ImageStatus", req, func() (*runtimev1.ImageStatusResponse, error) {
		if req.GetImage() == "" {
			return nil, invalid("image is empty")
		}
		ref, ok := f.imageRef(req.GetImage())
		if !ok {
			return &runtimev1.ImageStatusResponse{}, nil
		}
		return &runtimev1.ImageStatusResponse{Present: true, Image: &runtimev1.Image{Id: ref, RepoTags: []string{req.GetImage()}}}, nil
	})
}

func (f *Fake) ListImages(ctx context.Context, req *runtimev1.ListImagesRequest) (*runtimev1.ListImagesResponse, error) {
	return do(f, ctx, "ListImages", req, func() (*runtimev1.ListImagesResponse, error) {
		resp := &runtimev1.ListImagesResponse{}
		for name, ref := range f.images {
			resp.Images = append(resp.Images, &runtimev1.Image{Id: ref, RepoTags: []string{name}})
		}
		return resp, nil
	})
}

func (f *Fake) RemoveImage(ctx context.Context, req *runtimev1.RemoveImageRequest) (*runtimev1.RemoveImageResponse, error) {
	return do(f, ctx, "RemoveImage", req, func() (*runtimev1.RemoveImageResponse, error) {
		if req.GetImage() == "" {
			return nil, invalid("image is empty")
		}
		ref, ok := f.imageRef(req.GetImage())
		if !ok {
			return &runtimev1.RemoveImageResponse{}, nil
		}
		for _, c := range f.containers {
			if c.GetImageRef() == ref {
				return nil, status.Errorf(codes.FailedPrecondition, "image %q is in use", req.GetImage())
			}
		}
		for name, r := range f.images {
			if r == ref {
				delete(f.images, name)
			}
		}
		return &runtimev1.RemoveImageResponse{}, nil
	})
}

// errDeadline is what After hooks return to fake a timeout.
var errDeadline = status.Error(codes.DeadlineExceeded, "fake: deadline exceeded")

// DeadlineExceeded returns a DEADLINE_EXCEEDED error, the uncertain
// outcome of a call that timed out.
func DeadlineExceeded() error { return errDeadline }

var _ runtimev1.RuntimeServer = (*Fake)(nil)

// UpdateContainerResources changes nothing the fake keeps but checks the
// container: NOT_FOUND when unknown, FAILED_PRECONDITION when exited.
func (f *Fake) UpdateContainerResources(ctx context.Context, req *runtimev1.UpdateContainerResourcesRequest) (*runtimev1.UpdateContainerResourcesResponse, error) {
	return do(f, ctx, "UpdateContainerResources", req, func() (*runtimev1.UpdateContainerResourcesResponse, error) {
		c, ok := f.containers[req.GetContainerId()]
		switch {
		case !ok:
			return nil, notFound("container %q", req.GetContainerId())
		case c.GetState() == runtimev1.ContainerState_CONTAINER_STATE_EXITED:
			return nil, status.Errorf(codes.FailedPrecondition, "container %q exited", req.GetContainerId())
		}
		return &runtimev1.UpdateContainerResourcesResponse{}, nil
	})
}

// UpdateSandboxResources checks the sandbox: NOT_FOUND when unknown,
// FAILED_PRECONDITION when it was run without a pod cgroup.
func (f *Fake) UpdateSandboxResources(ctx context.Context, req *runtimev1.UpdateSandboxResourcesRequest) (*runtimev1.UpdateSandboxResourcesResponse, error) {
	return do(f, ctx, "UpdateSandboxResources", req, func() (*runtimev1.UpdateSandboxResourcesResponse, error) {
		if _, ok := f.sandboxes[req.GetSandboxId()]; !ok {
			return nil, notFound("sandbox %q", req.GetSandboxId())
		}
		if !f.podCgroups[req.GetSandboxId()] {
			return nil, status.Errorf(codes.FailedPrecondition, "sandbox %q has no pod cgroup", req.GetSandboxId())
		}
		return &runtimev1.UpdateSandboxResourcesResponse{}, nil
	})
}
