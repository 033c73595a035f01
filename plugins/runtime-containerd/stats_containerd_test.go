package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	runtimev1 "github.com/podhost/podhost/proto/runtime/v1"
	"github.com/podhost/podhost/test/crisetup"
)

// TestStatsWithContainerd runs a container burning CPU in a sandbox and
// reads ListStats: both are listed with their metadata, the container
// under its sandbox, with CPU time and a working set.
func TestStatsWithContainerd(t *testing.T) {
	c := crisetup.StartForTest(t)
	logs := t.TempDir()
	rt := connect(t, fmt.Sprintf(`{"endpoint":%q,"timeouts":{"runtime":"60s","image":"60s"}}`, c.Endpoint()))
	sb, sbCfg := runSandbox(t, rt, "stats", func(sb *runtimev1.SandboxConfig) {
		sb.HostNetwork = true
		sb.LogDirectory = filepath.Join(logs, sb.GetMetadata().GetUid())
	})
	id := createAndStart(t, rt, sb, sbCfg, "burn", "sh", "-c", "while true; do :; done")

	deadline := time.Now().Add(callTimeout)
	for {
		resp, err := rt.ListStats(callCtx(t), &runtimev1.ListStatsRequest{})
		if err != nil {
			t.Fatalf("ListStats: %v", err)
		}
		var sbs *runtimev1.SandboxStats
		var cs *runtimev1.ContainerStats
		for _, s := range resp.GetSandboxes() {
			if s.GetSandboxId() == sb {
				sbs = s
			}
		}
		for _, s := range resp.GetContainers() {
			if s.GetContainerId() == id {
				cs = s
			}
		}
		if sbs != nil && cs != nil && cs.GetCpu().GetUsageCoreNanoSeconds() > 0 && sbs.GetCpu().GetUsageCoreNanoSeconds() > 0 {
			if sbs.GetMetadata().GetUid() != sbCfg.GetMetadata().GetUid() || cs.GetMetadata().GetName() != "burn" || cs.GetSandboxId() != sb {
				t.Fatalf("stats name sandbox %v and container %v; want uid %s, container burn in sandbox %s", sbs.GetMetadata(), cs, sbCfg.GetMetadata().GetUid(), sb)
			}
			if cs.GetMemory().GetWorkingSetBytes() == 0 || sbs.GetMemory().GetWorkingSetBytes() == 0 || cs.GetCpu().GetTimestamp() == 0 {
				t.Fatalf("container memory %v cpu %v, sandbox memory %v; want a working set and a timestamp", cs.GetMemory(), cs.GetCpu(), sbs.GetMemory())
			}
			if cs.GetCreatedAt() == 0 || sbs.GetCreatedAt() == 0 || len(resp.GetImageFilesystems()) == 0 || resp.GetImageFilesystems()[0].GetMountpoint() == "" {
				t.Errorf("creation times container %d sandbox %d, image filesystems %v; want both times and a mount point", cs.GetCreatedAt(), sbs.GetCreatedAt(), resp.GetImageFilesystems())
			}
			if cs.GetWritableLayer() == nil {
				t.Errorf("container stats have no writable layer: %v", cs)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ListStats within %v: sandbox %v, container %v; want both with CPU time", callTimeout, sbs, cs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
