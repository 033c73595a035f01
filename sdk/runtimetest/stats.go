package runtimetest

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
)

// checkListStats runs a container and reads ListStats: a plugin without
// stats answers UNIMPLEMENTED; one with them lists the sandbox with its
// metadata and the container under it with its name, and every number it
// gives carries the time it was read.
func checkListStats(k *kit) {
	sb, sbCfg := k.runSandbox("stats", nil)
	id, _ := k.createContainer(sb, sbCfg, "app", k.ensureImage(), nil)
	k.mustOK("StartContainer", k.start(id)())
	resp, err := k.rt.ListStats(k.ctx(), &runtimev1.ListStatsRequest{})
	if status.Code(err) == codes.Unimplemented {
		return
	}
	if !k.wantCode("ListStats", err, codes.OK) {
		return
	}
	var sandbox *runtimev1.SandboxStats
	for _, s := range resp.GetSandboxes() {
		if s.GetSandboxId() == sb {
			sandbox = s
		}
	}
	switch {
	case sandbox == nil:
		k.Errorf("ListStats lists no sandbox %s", sb)
	case sandbox.GetMetadata().GetUid() != sbCfg.GetMetadata().GetUid():
		k.Errorf("ListStats: sandbox %s has metadata %v; want %v", sb, sandbox.GetMetadata(), sbCfg.GetMetadata())
	case sandbox.GetCpu() != nil && sandbox.GetCpu().GetTimestamp() == 0, sandbox.GetMemory() != nil && sandbox.GetMemory().GetTimestamp() == 0:
		k.Errorf("ListStats: sandbox %s has a number without its time: %v", sb, sandbox)
	}
	var container *runtimev1.ContainerStats
	for _, c := range resp.GetContainers() {
		if c.GetContainerId() == id {
			container = c
		}
	}
	switch {
	case container == nil:
		k.Errorf("ListStats lists no container %s", id)
	case container.GetSandboxId() != sb || container.GetMetadata().GetName() != "app":
		k.Errorf("ListStats: container %s in sandbox %q named %q; want app in %s", id, container.GetSandboxId(), container.GetMetadata().GetName(), sb)
	case container.GetCpu() != nil && container.GetCpu().GetTimestamp() == 0, container.GetMemory() != nil && container.GetMemory().GetTimestamp() == 0:
		k.Errorf("ListStats: container %s has a number without its time: %v", id, container)
	}
	k.mustOK("StopContainer", k.stop(id)())
}
