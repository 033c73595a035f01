package runtimetest

import (
	"context"
	"maps"

	"google.golang.org/grpc/codes"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/sdk/internal/kitcheck"
)

// wantCode fails the check unless err has the code want.
func (k *kit) wantCode(call string, err error, want codes.Code) bool {
	k.Helper()
	return kitcheck.WantCode(k.T, call, err, want)
}

// mustOK stops the check unless err is nil.
func (k *kit) mustOK(call string, err error) {
	k.Helper()
	kitcheck.MustOK(k.T, call, err)
}

// withLabels returns the check's labels plus extra.
func (k *kit) withLabels(extra map[string]string) map[string]string {
	out := maps.Clone(k.labels)
	maps.Copy(out, extra)
	return out
}

// sandboxConfig returns the config of a new sandbox carrying the check's
// labels plus extra.
func (k *kit) sandboxConfig(name string, extra map[string]string) *runtimev1.SandboxConfig {
	cfg := &runtimev1.SandboxConfig{
		Metadata:    &runtimev1.SandboxMetadata{Name: name, Namespace: "runtimetest", Uid: k.labels[checkLabel] + "-" + name, Attempt: 1},
		Hostname:    name,
		Labels:      k.withLabels(extra),
		Annotations: map[string]string{"runtimetest.podhost.io/annotation": "kept as given"},
	}
	if k.setup.Sandbox != nil {
		k.setup.Sandbox(cfg)
	}
	return cfg
}

// runSandbox runs a sandbox, removed when the check ends.
func (k *kit) runSandbox(name string, extra map[string]string) (string, *runtimev1.SandboxConfig) {
	k.Helper()
	cfg := k.sandboxConfig(name, extra)
	resp, err := k.rt.RunSandbox(k.ctx(), &runtimev1.RunSandboxRequest{Config: cfg})
	k.mustOK("RunSandbox", err)
	id := resp.GetSandboxId()
	if id == "" {
		k.Fatalf("RunSandbox: got an empty sandbox_id")
	}
	k.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), k.setup.CallTimeout)
		defer cancel()
		_, _ = k.rt.RemoveSandbox(ctx, &runtimev1.RemoveSandboxRequest{SandboxId: id})
	})
	return id, cfg
}

// ensureImage makes the kit's image present and returns its reference.
func (k *kit) ensureImage() string {
	k.Helper()
	resp, err := k.rt.EnsureImage(k.ctx(), &runtimev1.EnsureImageRequest{Image: k.setup.Image, PullPolicy: runtimev1.PullPolicy_PULL_POLICY_IF_NOT_PRESENT})
	k.mustOK("EnsureImage "+k.setup.Image, err)
	if resp.GetImageRef() == "" {
		k.Fatalf("EnsureImage %s: got an empty image_ref", k.setup.Image)
	}
	return resp.GetImageRef()
}

// containerConfig returns the config of a new container carrying the
// check's labels plus extra.
func (k *kit) containerConfig(name, image string, extra map[string]string) *runtimev1.ContainerConfig {
	cfg := &runtimev1.ContainerConfig{
		Metadata:    &runtimev1.ContainerMetadata{Name: name, Attempt: 1},
		Image:       image,
		Labels:      k.withLabels(extra),
		Annotations: map[string]string{"runtimetest.podhost.io/annotation": "kept as given"},
		LogPath:     name + ".log",
	}
	if k.setup.Container != nil {
		k.setup.Container(cfg)
	}
	return cfg
}

// createContainer creates a container in a sandbox from sandboxCfg.
func (k *kit) createContainer(sandboxID string, sandboxCfg *runtimev1.SandboxConfig, name, image string, extra map[string]string) (string, *runtimev1.ContainerConfig) {
	k.Helper()
	cfg := k.containerConfig(name, image, extra)
	resp, err := k.rt.CreateContainer(k.ctx(), &runtimev1.CreateContainerRequest{SandboxId: sandboxID, Config: cfg, SandboxConfig: sandboxCfg})
	k.mustOK("CreateContainer", err)
	if resp.GetContainerId() == "" {
		k.Fatalf("CreateContainer: got an empty container_id")
	}
	return resp.GetContainerId(), cfg
}

// containerState returns the state of a container.
func (k *kit) containerState(id string) runtimev1.ContainerState {
	k.Helper()
	resp, err := k.rt.ContainerStatus(k.ctx(), &runtimev1.ContainerStatusRequest{ContainerId: id})
	k.mustOK("ContainerStatus", err)
	return resp.GetContainer().GetState()
}

// sandboxIDs lists the sandboxes matching f, by ID.
func (k *kit) sandboxIDs(f *runtimev1.SandboxFilter) []string {
	k.Helper()
	resp, err := k.rt.ListSandboxes(k.ctx(), &runtimev1.ListSandboxesRequest{Filter: f})
	k.mustOK("ListSandboxes", err)
	var ids []string
	for _, sb := range resp.GetSandboxes() {
		ids = append(ids, sb.GetId())
	}
	return ids
}

// containerIDs lists the containers matching f, by ID.
func (k *kit) containerIDs(f *runtimev1.ContainerFilter) []string {
	k.Helper()
	resp, err := k.rt.ListContainers(k.ctx(), &runtimev1.ListContainersRequest{Filter: f})
	k.mustOK("ListContainers", err)
	var ids []string
	for _, c := range resp.GetContainers() {
		ids = append(ids, c.GetId())
	}
	return ids
}
