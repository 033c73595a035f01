package runtimetest

import (
	"maps"

	"google.golang.org/grpc/codes"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

func checkContainerLifecycle(k *kit) {
	sb, sbCfg := k.runSandbox("lifecycle", nil)
	image := k.ensureImage()
	id, cfg := k.createContainer(sb, sbCfg, "app", image, map[string]string{"runtimetest.podhost.io/odd value": "with spaces, ünïcode and = signs"})

	resp, err := k.rt.ContainerStatus(k.ctx(), &runtimev1.ContainerStatusRequest{ContainerId: id})
	k.mustOK("ContainerStatus", err)
	c := resp.GetContainer()
	if c.GetId() != id || c.GetSandboxId() != sb || c.GetState() != runtimev1.ContainerState_CONTAINER_STATE_CREATED {
		k.Errorf("created container: got id %q sandbox %q state %v; want %q %q %v", c.GetId(), c.GetSandboxId(), c.GetState(), id, sb, runtimev1.ContainerState_CONTAINER_STATE_CREATED)
	}
	if !maps.Equal(c.GetLabels(), cfg.GetLabels()) {
		k.Errorf("container labels: got %v; want %v unchanged", c.GetLabels(), cfg.GetLabels())
	}
	if !maps.Equal(c.GetAnnotations(), cfg.GetAnnotations()) {
		k.Errorf("container annotations: got %v; want %v unchanged", c.GetAnnotations(), cfg.GetAnnotations())
	}
	if c.GetMetadata().GetName() != cfg.GetMetadata().GetName() || c.GetMetadata().GetAttempt() != cfg.GetMetadata().GetAttempt() {
		k.Errorf("container metadata: got %v; want %v", c.GetMetadata(), cfg.GetMetadata())
	}
	if c.GetCreatedAt() <= 0 || c.GetStartedAt() != 0 {
		k.Errorf("created container times: got created %d started %d; want created set, started 0", c.GetCreatedAt(), c.GetStartedAt())
	}

	steps := []struct {
		call string
		do   func() error
		want codes.Code
		then runtimev1.ContainerState
	}{
		{"StartContainer", k.start(id), codes.OK, runtimev1.ContainerState_CONTAINER_STATE_RUNNING},
		{"StartContainer of a running container", k.start(id), codes.OK, runtimev1.ContainerState_CONTAINER_STATE_RUNNING},
		{"StopContainer", k.stop(id), codes.OK, runtimev1.ContainerState_CONTAINER_STATE_EXITED},
		{"StopContainer of an exited container", k.stop(id), codes.OK, runtimev1.ContainerState_CONTAINER_STATE_EXITED},
		{"StartContainer of an exited container", k.start(id), codes.FailedPrecondition, runtimev1.ContainerState_CONTAINER_STATE_EXITED},
	}
	for _, st := range steps {
		if !k.wantCode(st.call, st.do(), st.want) {
			return
		}
		if got := k.containerState(id); got != st.then {
			k.Fatalf("after %s: got state %v; want %v", st.call, got, st.then)
		}
	}
	resp, err = k.rt.ContainerStatus(k.ctx(), &runtimev1.ContainerStatusRequest{ContainerId: id})
	k.mustOK("ContainerStatus", err)
	if c := resp.GetContainer(); c.GetStartedAt() <= 0 || c.GetFinishedAt() < c.GetStartedAt() {
		k.Errorf("exited container times: got started %d finished %d; want both set, in order", c.GetStartedAt(), c.GetFinishedAt())
	}
	for range 2 {
		_, err := k.rt.RemoveContainer(k.ctx(), &runtimev1.RemoveContainerRequest{ContainerId: id})
		k.wantCode("RemoveContainer", err, codes.OK)
	}
	_, err = k.rt.ContainerStatus(k.ctx(), &runtimev1.ContainerStatusRequest{ContainerId: id})
	k.wantCode("ContainerStatus of a removed container", err, codes.NotFound)
}

func (k *kit) start(id string) func() error {
	return func() error {
		_, err := k.rt.StartContainer(k.ctx(), &runtimev1.StartContainerRequest{ContainerId: id})
		return err
	}
}

func (k *kit) stop(id string) func() error {
	return func() error {
		_, err := k.rt.StopContainer(k.ctx(), &runtimev1.StopContainerRequest{ContainerId: id, TimeoutSeconds: 0})
		return err
	}
}

func checkListContainers(k *kit) {
	image := k.ensureImage()
	sa, sacfg := k.runSandbox("a", nil)
	sb, sbcfg := k.runSandbox("b", nil)
	a, _ := k.createContainer(sa, sacfg, "app", image, map[string]string{"runtimetest.podhost.io/container": "a"})
	b, _ := k.createContainer(sb, sbcfg, "app", image, map[string]string{"runtimetest.podhost.io/container": "b"})
	k.mustOK("StartContainer", k.start(b)())
	tests := []struct {
		name   string
		filter *runtimev1.ContainerFilter
		want   []string
	}{
		{"the check's label", &runtimev1.ContainerFilter{LabelSelector: k.labels}, []string{a, b}},
		{"two labels", &runtimev1.ContainerFilter{LabelSelector: k.withLabels(map[string]string{"runtimetest.podhost.io/container": "b"})}, []string{b}},
		{"a label value nobody has", &runtimev1.ContainerFilter{LabelSelector: k.withLabels(map[string]string{"runtimetest.podhost.io/container": "c"})}, nil},
		{"sandbox", &runtimev1.ContainerFilter{SandboxId: sa}, []string{a}},
		{"id", &runtimev1.ContainerFilter{Id: b}, []string{b}},
		{"created", &runtimev1.ContainerFilter{State: runtimev1.ContainerState_CONTAINER_STATE_CREATED, LabelSelector: k.labels}, []string{a}},
		{"running", &runtimev1.ContainerFilter{State: runtimev1.ContainerState_CONTAINER_STATE_RUNNING, LabelSelector: k.labels}, []string{b}},
	}
	for _, tt := range tests {
		if got := k.containerIDs(tt.filter); !sameSet(got, tt.want) {
			k.Errorf("ListContainers by %s: got %q; want %q", tt.name, got, tt.want)
		}
	}
}

func checkEnsureImage(k *kit) {
	ref := k.ensureImage()
	again := k.ensureImage()
	if again != ref {
		k.Errorf("second EnsureImage: got %q; want %q as the first", again, ref)
	}
	resp, err := k.rt.ImageStatus(k.ctx(), &runtimev1.ImageStatusRequest{Image: k.setup.Image})
	k.mustOK("ImageStatus", err)
	if !resp.GetPresent() || resp.GetImage().GetId() == "" {
		k.Errorf("ImageStatus of an ensured image: got present=%v image %v; want present with an id", resp.GetPresent(), resp.GetImage())
	}
	never, err := k.rt.EnsureImage(k.ctx(), &runtimev1.EnsureImageRequest{Image: k.setup.Image, PullPolicy: runtimev1.PullPolicy_PULL_POLICY_NEVER})
	k.mustOK("EnsureImage of a present image with policy Never", err)
	if never.GetPulled() || never.GetImageRef() != ref {
		k.Errorf("EnsureImage of a present image with policy Never: got ref %q pulled %v; want %q, not pulled", never.GetImageRef(), never.GetPulled(), ref)
	}
}

func checkAbsentImage(k *kit) {
	absent := k.setup.AbsentImage
	resp, err := k.rt.ImageStatus(k.ctx(), &runtimev1.ImageStatusRequest{Image: absent})
	k.mustOK("ImageStatus of an absent image", err)
	if resp.GetPresent() {
		k.Errorf("ImageStatus of %s: got present; want absent", absent)
	}
	_, err = k.rt.EnsureImage(k.ctx(), &runtimev1.EnsureImageRequest{Image: absent, PullPolicy: runtimev1.PullPolicy_PULL_POLICY_NEVER})
	k.wantCode("EnsureImage of an absent image with policy Never", err, codes.NotFound)
	_, err = k.rt.RemoveImage(k.ctx(), &runtimev1.RemoveImageRequest{Image: absent})
	k.wantCode("RemoveImage of an absent image", err, codes.OK)
}
