package runtimetest

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// checkUpdateContainerResources changes a running container's resources
// twice (idempotent) and refuses an unknown container (NOT_FOUND) and an
// exited one (FAILED_PRECONDITION); a plugin without the call answers
// UNIMPLEMENTED, first asked for the unknown container.
func checkUpdateContainerResources(k *kit) {
	update := func(id string) error {
		_, err := k.rt.UpdateContainerResources(k.ctx(), &runtimev1.UpdateContainerResourcesRequest{ContainerId: id, Resources: &runtimev1.Resources{
			CpuShares: 512, CpuPeriod: 100000, CpuQuota: 50000, MemoryLimitInBytes: 256 << 20,
		}})
		return err
	}
	err := update("runtimetest-no-such-container")
	if status.Code(err) == codes.Unimplemented {
		return
	}
	k.wantCode("UpdateContainerResources of an unknown container", err, codes.NotFound)
	sb, sbCfg := k.runSandbox("resize", nil)
	id, _ := k.createContainer(sb, sbCfg, "app", k.ensureImage(), nil)
	k.mustOK("StartContainer", k.start(id)())
	for range 2 {
		k.wantCode("UpdateContainerResources of a running container", update(id), codes.OK)
	}
	k.mustOK("StopContainer", k.stop(id)())
	k.wantCode("UpdateContainerResources of an exited container", update(id), codes.FailedPrecondition)
}

// checkUpdateSandboxResources asks to change the pod cgroup of an unknown
// sandbox (NOT_FOUND) and of one run without a pod cgroup
// (FAILED_PRECONDITION), or gets UNIMPLEMENTED for the first.
func checkUpdateSandboxResources(k *kit) {
	update := func(id string) error {
		_, err := k.rt.UpdateSandboxResources(k.ctx(), &runtimev1.UpdateSandboxResourcesRequest{SandboxId: id, Resources: &runtimev1.Resources{CpuShares: 512}})
		return err
	}
	err := update("runtimetest-no-such-sandbox")
	if status.Code(err) == codes.Unimplemented {
		return
	}
	k.wantCode("UpdateSandboxResources of an unknown sandbox", err, codes.NotFound)
	sb, _ := k.runSandbox("no-pod-cgroup", nil)
	k.wantCode("UpdateSandboxResources of a sandbox without a pod cgroup", update(sb), codes.FailedPrecondition)
}
