package runtimetest

import (
	"google.golang.org/grpc/codes"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// checkMissingArguments sends each call with a required argument missing.
func checkMissingArguments(k *kit) {
	sbCfg := k.sandboxConfig("args", nil)
	noMetadata := k.sandboxConfig("args", nil)
	noMetadata.Metadata = nil
	ctrCfg := k.containerConfig("app", k.setup.Image, nil)
	noImage := k.containerConfig("app", "", nil)
	tests := []struct {
		name string
		err  func() error
	}{
		{"RunSandbox without config", func() error {
			_, err := k.rt.RunSandbox(k.ctx(), &runtimev1.RunSandboxRequest{})
			return err
		}},
		{"RunSandbox without metadata", func() error {
			_, err := k.rt.RunSandbox(k.ctx(), &runtimev1.RunSandboxRequest{Config: noMetadata})
			return err
		}},
		{"StopSandbox without sandbox_id", func() error {
			_, err := k.rt.StopSandbox(k.ctx(), &runtimev1.StopSandboxRequest{})
			return err
		}},
		{"RemoveSandbox without sandbox_id", func() error {
			_, err := k.rt.RemoveSandbox(k.ctx(), &runtimev1.RemoveSandboxRequest{})
			return err
		}},
		{"SandboxStatus without sandbox_id", func() error {
			_, err := k.rt.SandboxStatus(k.ctx(), &runtimev1.SandboxStatusRequest{})
			return err
		}},
		{"CreateContainer without sandbox_id", func() error {
			_, err := k.rt.CreateContainer(k.ctx(), &runtimev1.CreateContainerRequest{Config: ctrCfg, SandboxConfig: sbCfg})
			return err
		}},
		{"CreateContainer without config", func() error {
			_, err := k.rt.CreateContainer(k.ctx(), &runtimev1.CreateContainerRequest{SandboxId: unknownID, SandboxConfig: sbCfg})
			return err
		}},
		{"CreateContainer without image", func() error {
			_, err := k.rt.CreateContainer(k.ctx(), &runtimev1.CreateContainerRequest{SandboxId: unknownID, Config: noImage, SandboxConfig: sbCfg})
			return err
		}},
		{"StartContainer without container_id", func() error {
			_, err := k.rt.StartContainer(k.ctx(), &runtimev1.StartContainerRequest{})
			return err
		}},
		{"StopContainer without container_id", func() error {
			_, err := k.rt.StopContainer(k.ctx(), &runtimev1.StopContainerRequest{})
			return err
		}},
		{"RemoveContainer without container_id", func() error {
			_, err := k.rt.RemoveContainer(k.ctx(), &runtimev1.RemoveContainerRequest{})
			return err
		}},
		{"ContainerStatus without container_id", func() error {
			_, err := k.rt.ContainerStatus(k.ctx(), &runtimev1.ContainerStatusRequest{})
			return err
		}},
		{"EnsureImage without image", func() error {
			_, err := k.rt.EnsureImage(k.ctx(), &runtimev1.EnsureImageRequest{})
			return err
		}},
		{"ImageStatus without image", func() error {
			_, err := k.rt.ImageStatus(k.ctx(), &runtimev1.ImageStatusRequest{})
			return err
		}},
		{"RemoveImage without image", func() error {
			_, err := k.rt.RemoveImage(k.ctx(), &runtimev1.RemoveImageRequest{})
			return err
		}},
	}
	for _, tt := range tests {
		k.wantCode(tt.name, tt.err(), codes.InvalidArgument)
	}
	if got := k.sandboxIDs(&runtimev1.SandboxFilter{LabelSelector: k.labels}); len(got) > 0 {
		k.Errorf("after refused calls, ListSandboxes: got %q; want none", got)
		for _, id := range got {
			_, _ = k.rt.RemoveSandbox(k.ctx(), &runtimev1.RemoveSandboxRequest{SandboxId: id})
		}
	}
}
