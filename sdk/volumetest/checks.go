package volumetest

import (
	"maps"
	"os"
	"path/filepath"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/podhost/podhost/pluginapi"
	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
	"github.com/podhost/podhost/sdk/internal/kitcheck"
)

// check is one rule of the contract. applies, when set, tells from the
// capabilities whether the rule concerns the plugin.
type check struct {
	name    string
	applies func(*volumev1.GetCapabilitiesResponse) bool
	run     func(k *kit)
}

func attaches(c *volumev1.GetCapabilitiesResponse) bool  { return c.GetRequiresAttach() }
func stages(c *volumev1.GetCapabilitiesResponse) bool    { return c.GetStageUnstage() }
func metrics(c *volumev1.GetCapabilitiesResponse) bool   { return c.GetSupportsMetrics() }
func noMetrics(c *volumev1.GetCapabilitiesResponse) bool { return !c.GetSupportsMetrics() }
func block(c *volumev1.GetCapabilitiesResponse) bool     { return c.GetBlock() }
func reconstructs(c *volumev1.GetCapabilitiesResponse) bool {
	return c.GetReconstruction()
}

var checks = []check{
	{name: "GetInfo describes a volume plugin", run: checkGetInfo},
	{name: "Configure twice is accepted", run: checkConfigureTwice},
	{name: "Probe is ready", run: checkProbe},
	{name: "GetCapabilities does not change", run: checkCapabilitiesStable},
	{name: "missing arguments are INVALID_ARGUMENT", run: checkMissingArguments},
	{name: "Attach twice succeeds", applies: attaches, run: checkAttachTwice},
	{name: "Detach of a never-attached volume succeeds", applies: attaches, run: checkDetachNeverAttached},
	{name: "Stage twice succeeds", applies: stages, run: checkStageTwice},
	{name: "Stage of another volume at a staged path is ALREADY_EXISTS", applies: stages, run: checkStageOther},
	{name: "Unstage of a never-staged volume succeeds", applies: stages, run: checkUnstageNeverStaged},
	{name: "Unstage keeps the staging directory", applies: stages, run: checkUnstageKeepsDir},
	{name: "Publish before Stage is FAILED_PRECONDITION", applies: stages, run: checkPublishBeforeStage},
	{name: "Publish twice succeeds", run: checkPublishTwice},
	{name: "Unpublish of a never-published path succeeds", run: checkUnpublishNeverPublished},
	{name: "round trip", run: checkRoundTrip},
	{name: "data written through a target is in the volume", run: checkDataInVolume},
	{name: "a read-only target refuses writes", run: checkReadonly},
	{name: "an interrupted Stage is undone by Unstage", applies: stages, run: checkStageInterrupted},
	{name: "an interrupted Publish is undone by Unpublish", run: checkPublishInterrupted},
	{name: "teardown twice succeeds", run: checkTearDownTwice},
	{name: "a volume ID is never used as a path", run: checkTraversalID},
	{name: "GetMetrics is UNIMPLEMENTED without supports_metrics", applies: noMetrics, run: checkMetricsUnimplemented},
	{name: "GetMetrics reports sane usage", applies: metrics, run: checkMetrics},
	{name: "GetMetrics of an unknown path is NOT_FOUND", applies: metrics, run: checkMetricsUnknown},
	{name: "UnmapBlock of a never-mapped path succeeds", applies: block, run: checkUnmapNeverMapped},
	{name: "Reconstruct finds a published volume", applies: reconstructs, run: checkReconstruct},
}

func checkGetInfo(k *kit) {
	info, err := k.id.GetInfo(k.ctx(), &pluginv1.GetInfoRequest{})
	k.mustOK("GetInfo", err)
	kitcheck.CheckInfo(k.T, info, k.setup.Plugin.Name, pluginv1.Kind_KIND_VOLUME)
	for _, c := range []struct {
		name string
		has  bool
	}{
		{pluginapi.CapVolumeMetrics, k.caps.GetSupportsMetrics()},
		{pluginapi.CapVolumeBlock, k.caps.GetBlock()},
		{pluginapi.CapVolumeReconstruct, k.caps.GetReconstruction()},
	} {
		if got := slices.Contains(info.GetCapabilities(), c.name); got != c.has {
			k.Errorf("GetInfo lists capability %q: got %v; want %v, as GetCapabilities says", c.name, got, c.has)
		}
	}
}

func checkConfigureTwice(k *kit) { kitcheck.CheckConfigureTwice(k.T, k.ctx, k.id, k.setup.Config) }

func checkProbe(k *kit) { kitcheck.CheckProbe(k.T, k.ctx(), k.id) }

func checkCapabilitiesStable(k *kit) {
	again, err := k.vol.GetCapabilities(k.ctx(), &volumev1.GetCapabilitiesRequest{})
	k.mustOK("GetCapabilities", err)
	if !proto.Equal(again, k.caps) {
		k.Errorf("GetCapabilities: got %v; want %v as before", again, k.caps)
	}
}

func checkAttachTwice(k *kit) {
	v := k.setup.NewVolume(k.T)
	first := k.attach(v)
	second := k.attach(v)
	if !maps.Equal(first, second) {
		k.Errorf("second Attach publish_context: got %v; want %v as the first", second, first)
	}
	for range 2 {
		_, err := k.vol.Detach(k.ctx(), k.detachReq(v))
		k.mustOK("Detach", err)
	}
}

func checkDetachNeverAttached(k *kit) {
	_, err := k.vol.Detach(k.ctx(), k.detachReq(k.setup.NewVolume(k.T)))
	k.wantCode("Detach of a never-attached volume", err, codes.OK)
}

func checkStageTwice(k *kit) {
	p := k.stage()
	_, err := k.vol.Stage(k.ctx(), k.stageReq(p.vol, p.pubContext, p.staging))
	k.wantCode("second Stage", err, codes.OK)
	_, err = k.vol.Publish(k.ctx(), k.publishReq(p))
	k.wantCode("Publish after two Stages", err, codes.OK)
	k.tearDown(p)
}

func checkStageOther(k *kit) {
	p := k.stage()
	other := k.setup.NewVolume(k.T)
	if other.ID == p.vol.ID {
		k.Fatalf("NewVolume returned volume %q twice; want different volumes", other.ID)
	}
	_, err := k.vol.Stage(k.ctx(), k.stageReq(other, k.attach(other), p.staging))
	k.wantCode("Stage of another volume at a staged path", err, codes.AlreadyExists)
	if k.caps.GetRequiresAttach() {
		_, err := k.vol.Detach(k.ctx(), k.detachReq(other))
		k.mustOK("Detach", err)
	}
	_, err = k.vol.Publish(k.ctx(), k.publishReq(p))
	k.wantCode("Publish of the first volume after the refused Stage", err, codes.OK)
	k.tearDown(p)
}

func checkUnstageNeverStaged(k *kit) {
	v := k.setup.NewVolume(k.T)
	empty := k.stagingPath()
	missing := filepath.Join(k.dir, "never-created")
	for _, path := range []string{empty, missing} {
		_, err := k.vol.Unstage(k.ctx(), &volumev1.UnstageRequest{VolumeId: v.ID, StagingPath: path})
		k.wantCode("Unstage of never-staged path "+path, err, codes.OK)
	}
	k.wantStagingDir(empty)
}

func checkUnstageKeepsDir(k *kit) {
	p := k.stage()
	_, err := k.vol.Unstage(k.ctx(), &volumev1.UnstageRequest{VolumeId: p.vol.ID, StagingPath: p.staging})
	k.mustOK("Unstage", err)
	k.wantStagingDir(p.staging)
	if k.caps.GetRequiresAttach() {
		_, err := k.vol.Detach(k.ctx(), k.detachReq(p.vol))
		k.mustOK("Detach", err)
	}
}

func checkPublishBeforeStage(k *kit) {
	v := k.setup.NewVolume(k.T)
	p := &published{vol: v, pubContext: k.attach(v), staging: k.stagingPath(), target: k.targetPath()}
	_, err := k.vol.Publish(k.ctx(), k.publishReq(p))
	k.wantCode("Publish before Stage", err, codes.FailedPrecondition)
	k.wantAbsent("after a refused Publish, target path", p.target)
}

func checkPublishTwice(k *kit) {
	p := k.publish()
	_, err := k.vol.Publish(k.ctx(), k.publishReq(p))
	k.wantCode("second Publish", err, codes.OK)
	k.tearDown(p)
}

func checkUnpublishNeverPublished(k *kit) {
	v := k.setup.NewVolume(k.T)
	_, err := k.vol.Unpublish(k.ctx(), &volumev1.UnpublishRequest{VolumeId: v.ID, TargetPath: k.targetPath()})
	k.wantCode("Unpublish of a never-created target path", err, codes.OK)
}

// checkRoundTrip takes a volume through every step and writes to it.
func checkRoundTrip(k *kit) {
	p := k.publish()
	file := filepath.Join(p.target, "volumetest")
	if err := os.WriteFile(file, []byte("podhost"), 0o600); err != nil {
		k.Errorf("writing to the published volume: %v", err)
	} else if got, err := os.ReadFile(file); err != nil || string(got) != "podhost" {
		k.Errorf("reading back from the published volume: got %q, %v; want %q", got, err, "podhost")
	}
	k.tearDown(p)
}

func checkTearDownTwice(k *kit) {
	p := k.publish()
	k.tearDown(p)
	k.tearDown(p)
}

func checkMetricsUnimplemented(k *kit) {
	p := k.publish()
	_, err := k.vol.GetMetrics(k.ctx(), &volumev1.GetMetricsRequest{VolumeId: p.vol.ID, VolumePath: p.target})
	k.wantCode("GetMetrics", err, codes.Unimplemented)
	k.tearDown(p)
}

func checkMetrics(k *kit) {
	p := k.publish()
	m, err := k.vol.GetMetrics(k.ctx(), &volumev1.GetMetricsRequest{VolumeId: p.vol.ID, VolumePath: p.target})
	k.mustOK("GetMetrics", err)
	if m.GetTotalBytes() <= 0 {
		k.Errorf("GetMetrics total_bytes: got %d; want > 0", m.GetTotalBytes())
	}
	for _, u := range []struct {
		what                   string
		total, used, available int64
	}{
		{"bytes", m.GetTotalBytes(), m.GetUsedBytes(), m.GetAvailableBytes()},
		{"inodes", m.GetTotalInodes(), m.GetUsedInodes(), m.GetAvailableInodes()},
	} {
		if u.used < 0 || u.available < 0 || u.used+u.available > u.total {
			k.Errorf("GetMetrics %s: got used %d + available %d, total %d; want both >= 0 and their sum <= total", u.what, u.used, u.available, u.total)
		}
	}
	k.tearDown(p)
}

func checkMetricsUnknown(k *kit) {
	v := k.setup.NewVolume(k.T)
	_, err := k.vol.GetMetrics(k.ctx(), &volumev1.GetMetricsRequest{VolumeId: v.ID, VolumePath: k.targetPath()})
	k.wantCode("GetMetrics of a never-published path", err, codes.NotFound)
}

func checkUnmapNeverMapped(k *kit) {
	v := k.setup.NewVolume(k.T)
	_, err := k.vol.UnmapBlock(k.ctx(), &volumev1.UnmapBlockRequest{VolumeId: v.ID, TargetPath: k.targetPath()})
	k.wantCode("UnmapBlock of a never-mapped path", err, codes.OK)
}

func checkReconstruct(k *kit) {
	p := k.publish()
	resp, err := k.vol.Reconstruct(k.ctx(), &volumev1.ReconstructRequest{TargetPath: p.target})
	k.mustOK("Reconstruct", err)
	if !resp.GetFound() || resp.GetVolumeId() != p.vol.ID || resp.GetStagingPath() != p.staging {
		k.Errorf("Reconstruct(%s): got found=%v volume %q staging %q; want found=true volume %q staging %q",
			p.target, resp.GetFound(), resp.GetVolumeId(), resp.GetStagingPath(), p.vol.ID, p.staging)
	}
	k.tearDown(p)
	resp, err = k.vol.Reconstruct(k.ctx(), &volumev1.ReconstructRequest{TargetPath: p.target})
	k.mustOK("Reconstruct of an unpublished path", err)
	if resp.GetFound() {
		k.Errorf("Reconstruct of an unpublished path: got found=true; want false")
	}
}
