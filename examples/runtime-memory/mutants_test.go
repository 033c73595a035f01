package main

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/internal/testutil"
	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/sdk/runtimetest"
)

// The conformance kit must catch a plugin that breaks the contract. Each
// mutant is runtime-memory with one bug; TestKitCatchesMutants runs the kit
// against it in a child process (this test binary, re-executed) and expects
// the named subtest to fail.

// mutantEnv names the mutant TestMutantConformance serves.
const mutantEnv = "RUNTIME_MEMORY_MUTANT"

// mutant is runtime-memory with some calls replaced.
type mutant struct {
	*server
	noEventsCapability bool
	sandboxStatus      func(context.Context, *runtimev1.SandboxStatusRequest) (*runtimev1.SandboxStatusResponse, error)
	listSandboxes      func(context.Context, *runtimev1.ListSandboxesRequest) (*runtimev1.ListSandboxesResponse, error)
	stopSandbox        func(context.Context, *runtimev1.StopSandboxRequest) (*runtimev1.StopSandboxResponse, error)
	createContainer    func(context.Context, *runtimev1.CreateContainerRequest) (*runtimev1.CreateContainerResponse, error)
	containerStatus    func(context.Context, *runtimev1.ContainerStatusRequest) (*runtimev1.ContainerStatusResponse, error)
	listContainers     func(context.Context, *runtimev1.ListContainersRequest) (*runtimev1.ListContainersResponse, error)
	removeImage        func(context.Context, *runtimev1.RemoveImageRequest) (*runtimev1.RemoveImageResponse, error)
	events             func(*runtimev1.EventsRequest, grpc.ServerStreamingServer[runtimev1.Event]) error
}

func (m *mutant) SandboxStatus(ctx context.Context, req *runtimev1.SandboxStatusRequest) (*runtimev1.SandboxStatusResponse, error) {
	if m.sandboxStatus != nil {
		return m.sandboxStatus(ctx, req)
	}
	return m.server.SandboxStatus(ctx, req)
}

func (m *mutant) ListSandboxes(ctx context.Context, req *runtimev1.ListSandboxesRequest) (*runtimev1.ListSandboxesResponse, error) {
	if m.listSandboxes != nil {
		return m.listSandboxes(ctx, req)
	}
	return m.server.ListSandboxes(ctx, req)
}

func (m *mutant) StopSandbox(ctx context.Context, req *runtimev1.StopSandboxRequest) (*runtimev1.StopSandboxResponse, error) {
	if m.stopSandbox != nil {
		return m.stopSandbox(ctx, req)
	}
	return m.server.StopSandbox(ctx, req)
}

func (m *mutant) CreateContainer(ctx context.Context, req *runtimev1.CreateContainerRequest) (*runtimev1.CreateContainerResponse, error) {
	if m.createContainer != nil {
		return m.createContainer(ctx, req)
	}
	return m.server.CreateContainer(ctx, req)
}

func (m *mutant) ContainerStatus(ctx context.Context, req *runtimev1.ContainerStatusRequest) (*runtimev1.ContainerStatusResponse, error) {
	if m.containerStatus != nil {
		return m.containerStatus(ctx, req)
	}
	return m.server.ContainerStatus(ctx, req)
}

func (m *mutant) ListContainers(ctx context.Context, req *runtimev1.ListContainersRequest) (*runtimev1.ListContainersResponse, error) {
	if m.listContainers != nil {
		return m.listContainers(ctx, req)
	}
	return m.server.ListContainers(ctx, req)
}

func (m *mutant) RemoveImage(ctx context.Context, req *runtimev1.RemoveImageRequest) (*runtimev1.RemoveImageResponse, error) {
	if m.removeImage != nil {
		return m.removeImage(ctx, req)
	}
	return m.server.RemoveImage(ctx, req)
}

func (m *mutant) Events(req *runtimev1.EventsRequest, stream grpc.ServerStreamingServer[runtimev1.Event]) error {
	if m.events != nil {
		return m.events(req, stream)
	}
	return m.server.Events(req, stream)
}

// mutants maps a bug to the mutant and the kit subtest that must catch it.
var mutants = map[string]testutil.Mutant[*mutant]{
	"labels changed": {Mutate: func(m *mutant) {
		m.sandboxStatus = func(ctx context.Context, req *runtimev1.SandboxStatusRequest) (*runtimev1.SandboxStatusResponse, error) {
			resp, err := m.server.SandboxStatus(ctx, req)
			if err == nil {
				maps.DeleteFunc(resp.Sandbox.Labels, func(k, _ string) bool { return strings.Contains(k, " ") })
			}
			return resp, err
		}
	}, CaughtBy: "RunSandbox_keeps_labels,_annotations_and_metadata"},
	"label selector ignored": {Mutate: func(m *mutant) {
		m.listSandboxes = func(ctx context.Context, req *runtimev1.ListSandboxesRequest) (*runtimev1.ListSandboxesResponse, error) {
			if len(req.GetFilter().GetLabelSelector()) > 1 {
				req.Filter.LabelSelector = nil
			}
			return m.server.ListSandboxes(ctx, req)
		}
	}, CaughtBy: "ListSandboxes_filters_by_label,_id_and_state"},
	"stopping an unknown sandbox is NOT_FOUND": {Mutate: func(m *mutant) {
		m.stopSandbox = func(ctx context.Context, req *runtimev1.StopSandboxRequest) (*runtimev1.StopSandboxResponse, error) {
			if _, err := m.server.SandboxStatus(ctx, &runtimev1.SandboxStatusRequest{SandboxId: req.GetSandboxId()}); err != nil {
				return nil, err
			}
			return m.server.StopSandbox(ctx, req)
		}
	}, CaughtBy: "unknown_objects"},
	"unknown sandbox is INTERNAL": {Mutate: func(m *mutant) {
		m.createContainer = func(ctx context.Context, req *runtimev1.CreateContainerRequest) (*runtimev1.CreateContainerResponse, error) {
			resp, err := m.server.CreateContainer(ctx, req)
			if status.Code(err) == codes.NotFound {
				err = status.Error(codes.Internal, "no sandbox")
			}
			return resp, err
		}
	}, CaughtBy: "CreateContainer_in_an_unknown_sandbox_is_NOT_FOUND"},
	"a killed container exits 0": {Mutate: func(m *mutant) {
		m.containerStatus = func(ctx context.Context, req *runtimev1.ContainerStatusRequest) (*runtimev1.ContainerStatusResponse, error) {
			resp, err := m.server.ContainerStatus(ctx, req)
			if err == nil {
				resp.Container.ExitCode = 0
			}
			return resp, err
		}
	}, CaughtBy: "a_killed_container_reports_its_exit_code"},
	"listed exit code without a finish time": {Mutate: func(m *mutant) {
		m.listContainers = func(ctx context.Context, req *runtimev1.ListContainersRequest) (*runtimev1.ListContainersResponse, error) {
			resp, err := m.server.ListContainers(ctx, req)
			for _, c := range resp.GetContainers() {
				c.FinishedAt = 0
			}
			return resp, err
		}
	}, CaughtBy: "a_killed_container_reports_its_exit_code"},
	"code outside the contract": {Mutate: func(m *mutant) {
		m.removeImage = func(context.Context, *runtimev1.RemoveImageRequest) (*runtimev1.RemoveImageResponse, error) {
			return nil, status.Error(codes.AlreadyExists, "gone already")
		}
	}, CaughtBy: "an_absent_image"},
	"events stream silent": {Mutate: func(m *mutant) {
		m.events = func(_ *runtimev1.EventsRequest, stream grpc.ServerStreamingServer[runtimev1.Event]) error {
			if err := stream.SendHeader(metadata.MD{}); err != nil {
				return err
			}
			<-stream.Context().Done()
			return nil
		}
	}, CaughtBy: "Events_streams_changes"},
	"events served without the capability": {Mutate: func(m *mutant) {
		m.noEventsCapability = true
	}, CaughtBy: "Events_is_UNIMPLEMENTED_without_runtime.events"},
}

func TestMutantConformance(t *testing.T) {
	mu := testutil.ServedMutant(t, mutantEnv, mutants)
	runtimetest.Run(t, func(t *testing.T) runtimetest.Setup {
		p := newPlugin("test")
		m := &mutant{server: p.Runtime.(*server)}
		if mu.Mutate != nil {
			mu.Mutate(m)
		}
		if m.noEventsCapability {
			p.Capabilities = nil
		}
		p.Runtime = m
		return runtimetest.Setup{Plugin: p, CallTimeout: 5 * time.Second}
	})
}

func TestKitCatchesMutants(t *testing.T) {
	testutil.KitCatchesMutants(t, mutantEnv, "TestMutantConformance", mutants)
}
