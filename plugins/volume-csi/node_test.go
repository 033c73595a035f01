package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// TestStageNeedsStageUnstage: Stage and Unstage reach the driver only when
// it advertises STAGE_UNSTAGE_VOLUME, and Publish then passes the staging
// path; otherwise they succeed without a call and Publish passes none.
func TestStageNeedsStageUnstage(t *testing.T) {
	tests := []struct {
		name        string
		caps        []csi.NodeServiceCapability_RPC_Type
		wantStage   int
		wantStaging bool
	}{
		{"with STAGE_UNSTAGE_VOLUME", []csi.NodeServiceCapability_RPC_Type{stageCap}, 1, true},
		{"without", nil, 0, false},
		{"with other capabilities only", []csi.NodeServiceCapability_RPC_Type{statsCap}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeDriver("d.csi", tt.caps...)
			tp := newTestPlugin(t, startDrivers(t, f)...)
			tp.stageAndPublish(t, "d.csi", "vol")
			_, err := tp.Unpublish(ctx(t), &volumev1.UnpublishRequest{Driver: "d.csi", VolumeId: "vol", TargetPath: tp.targetPath("vol")})
			wantCode(t, "Unpublish", err, codes.OK)
			_, err = tp.Unstage(ctx(t), &volumev1.UnstageRequest{Driver: "d.csi", VolumeId: "vol", StagingPath: tp.stagingPath("vol")})
			wantCode(t, "Unstage", err, codes.OK)
			if got := f.count("NodeStageVolume"); got != tt.wantStage {
				t.Errorf("NodeStageVolume calls: got %d; want %d (calls %v)", got, tt.wantStage, f.methods())
			}
			if got := f.count("NodeUnstageVolume"); got != tt.wantStage {
				t.Errorf("NodeUnstageVolume calls: got %d; want %d (calls %v)", got, tt.wantStage, f.methods())
			}
			pub, _ := f.last("NodePublishVolume").(*csi.NodePublishVolumeRequest)
			if got := pub.GetStagingTargetPath() != ""; got != tt.wantStaging {
				t.Errorf("NodePublishVolume staging_target_path %q: set %v; want %v", pub.GetStagingTargetPath(), got, tt.wantStaging)
			}
		})
	}
}

// TestMetricsNeedGetVolumeStats: without GET_VOLUME_STATS GetMetrics is
// UNIMPLEMENTED and the driver never sees NodeGetVolumeStats.
func TestMetricsNeedGetVolumeStats(t *testing.T) {
	tests := []struct {
		name      string
		caps      []csi.NodeServiceCapability_RPC_Type
		wantCode  codes.Code
		wantCalls int
	}{
		{"with GET_VOLUME_STATS", []csi.NodeServiceCapability_RPC_Type{stageCap, statsCap}, codes.OK, 1},
		{"without", []csi.NodeServiceCapability_RPC_Type{stageCap}, codes.Unimplemented, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeDriver("d.csi", tt.caps...)
			tp := newTestPlugin(t, startDrivers(t, f)...)
			tp.stageAndPublish(t, "d.csi", "vol")
			m, err := tp.GetMetrics(ctx(t), &volumev1.GetMetricsRequest{Driver: "d.csi", VolumeId: "vol", VolumePath: tp.targetPath("vol"), StagingPath: tp.stagingPath("vol")})
			wantCode(t, "GetMetrics", err, tt.wantCode)
			if got := f.count("NodeGetVolumeStats"); got != tt.wantCalls {
				t.Errorf("NodeGetVolumeStats calls: got %d; want %d", got, tt.wantCalls)
			}
			if err == nil && (m.GetTotalBytes() != 1<<20 || m.GetUsedInodes() != 1) {
				t.Errorf("GetMetrics: got %v; want total_bytes %d, used_inodes 1", m, 1<<20)
			}
		})
	}
}

// TestEveryCallHasTheDriverDeadline: a call the driver does not answer
// ends at the driver's timeout as DEADLINE_EXCEEDED, and the driver saw the
// deadline; without a timeout the deadline is two minutes away.
func TestEveryCallHasTheDriverDeadline(t *testing.T) {
	tests := []struct {
		name    string
		timeout string
		block   bool
		max     string // the deadline is at most this far when the call arrives
	}{
		{"configured, driver hangs", "200ms", true, "200ms"},
		{"default", "", false, "2m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeDriver("d.csi", stageCap)
			type seen struct {
				method string
				ok     bool
				left   float64
			}
			var mu sync.Mutex
			var deadlines []seen
			hung := false
			f.hook = func(ctx context.Context, method string) error {
				d, ok := ctx.Deadline()
				mu.Lock()
				deadlines = append(deadlines, seen{method, ok, timeUntil(d)})
				mu.Unlock()
				if tt.block && method == "NodeStageVolume" {
					<-ctx.Done()
					mu.Lock()
					hung = true
					mu.Unlock()
					return status.Error(codes.DeadlineExceeded, "gave up")
				}
				return nil
			}
			specs := startDrivers(t, f)
			specs[0].timeout = tt.timeout
			tp := newTestPlugin(t, specs...)
			_, err := tp.Stage(ctx(t), tp.stageReq("d.csi", "vol"))
			want := codes.OK
			if tt.block {
				want = codes.DeadlineExceeded
				waitFor(t, "the driver to see its call cancelled", func() bool { mu.Lock(); defer mu.Unlock(); return hung })
			}
			wantCode(t, "Stage", err, want)
			limit := mustDuration(t, tt.max).Seconds()
			mu.Lock()
			defer mu.Unlock()
			n := len(deadlines)
			for _, s := range deadlines {
				if !s.ok || s.left > limit {
					t.Errorf("%s: deadline set %v, %.1fs left; want a deadline at most %s away", s.method, s.ok, s.left, tt.max)
				}
			}
			if n < 4 {
				t.Errorf("driver saw %d calls; want GetPluginInfo, NodeGetInfo, NodeGetCapabilities and NodeStageVolume", n)
			}
		})
	}
}

// TestCapabilitiesRefetchedAfterDriverRestart: the plugin caches the node
// capabilities, and asks again once the driver restarted.
func TestCapabilitiesRefetchedAfterDriverRestart(t *testing.T) {
	first := newFakeDriver("d.csi", stageCap)
	specs := startDrivers(t, first)
	tp := newTestPlugin(t, specs...)
	for range 2 {
		_, err := tp.Stage(ctx(t), tp.stageReq("d.csi", "vol"))
		wantCode(t, "Stage", err, codes.OK)
	}
	if got := first.count("NodeGetCapabilities"); got != 1 {
		t.Errorf("NodeGetCapabilities calls for two Stages: got %d; want 1 (cached)", got)
	}
	dc, err := tp.p.driverFor("d.csi")
	if err != nil {
		t.Fatal(err)
	}
	before := dc.epoch.Load()
	first.stop()
	waitFor(t, "the plugin to see the connection drop", func() bool { return dc.epoch.Load() != before })

	second := newFakeDriver("d.csi") // restarted without STAGE_UNSTAGE_VOLUME
	second.serve(t, specs[0].socket)
	_, err = tp.Stage(ctx(t), tp.stageReq("d.csi", "vol"))
	wantCode(t, "Stage after restart", err, codes.OK)
	if got := second.count("NodeGetCapabilities"); got != 1 {
		t.Errorf("NodeGetCapabilities calls after restart: got %d; want 1", got)
	}
	if got := second.count("NodeStageVolume"); got != 0 {
		t.Errorf("NodeStageVolume calls after the driver lost STAGE_UNSTAGE_VOLUME: got %d; want 0", got)
	}
}

// TestProbeRefetchesWhenThePluginInfoChanged: a driver whose GetPluginInfo
// answers another version is asked for its capabilities again.
func TestProbeRefetchesWhenThePluginInfoChanged(t *testing.T) {
	f := newFakeDriver("d.csi", stageCap)
	tp := newTestPlugin(t, startDrivers(t, f)...)
	if ready, msg := tp.p.probe(ctx(t)); !ready || msg != "" {
		t.Fatalf("probe: got %v %q; want ready, no message", ready, msg)
	}
	f.mu.Lock()
	f.version = "2.0"
	f.mu.Unlock()
	if ready, msg := tp.p.probe(ctx(t)); !ready || msg != "" {
		t.Fatalf("probe: got %v %q; want ready, no message", ready, msg)
	}
	if got := f.count("NodeGetCapabilities"); got != 2 {
		t.Errorf("NodeGetCapabilities calls: got %d; want 2 (once more after the version changed)", got)
	}
}

func TestProbeNamesUnreachableDrivers(t *testing.T) {
	specs := startDrivers(t, newFakeDriver("up.csi"), newFakeDriver("down.csi"))
	specs[1].fake.stop()
	tp := newTestPlugin(t, specs...)
	ready, msg := tp.p.probe(ctx(t))
	if !ready || !strings.Contains(msg, `"down.csi"`) || strings.Contains(msg, `"up.csi"`) {
		t.Errorf("probe: got %v %q; want ready, naming down.csi only", ready, msg)
	}
}

// TestGarbageFromTheDriverIsAnError: unusable answers fail the call with an
// error, and the plugin keeps serving.
func TestGarbageFromTheDriverIsAnError(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(f *fakeDriver)
		call   string // "stage" or "metrics"
		want   codes.Code
	}{
		{"capabilities with empty entries", func(f *fakeDriver) {
			f.caps = append(f.caps, nil, &csi.NodeServiceCapability{}, &csi.NodeServiceCapability{Type: &csi.NodeServiceCapability_Rpc{}})
		}, "stage", codes.OK},
		{"unknown capability type", func(f *fakeDriver) { f.caps = rpcCaps(stageCap, statsCap, 99) }, "stage", codes.OK},
		{"node info without node id", func(f *fakeDriver) { f.nodeID = "" }, "stage", codes.Aborted},
		{"another driver at the endpoint", func(f *fakeDriver) { f.name = "other.csi" }, "stage", codes.Aborted},
		{"stats without usage", func(f *fakeDriver) { f.stats = &csi.NodeGetVolumeStatsResponse{} }, "metrics", codes.Aborted},
		{"stats with nil usage", func(f *fakeDriver) { f.stats = &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{nil}} }, "metrics", codes.Aborted},
		{"stats of unknown unit only", func(f *fakeDriver) {
			f.stats = &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{{Unit: 7, Total: 5}}}
		}, "metrics", codes.Aborted},
		{"negative stats", func(f *fakeDriver) {
			f.stats = &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{{Unit: csi.VolumeUsage_BYTES, Total: -1}}}
		}, "metrics", codes.Aborted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeDriver("d.csi", stageCap, statsCap)
			tt.mutate(f)
			spec := driverSpec{fake: f, name: "d.csi", socket: filepath.Join(socketDir(t), "d.sock")}
			f.serve(t, spec.socket)
			tp := newTestPlugin(t, spec)
			var err error
			switch tt.call {
			case "stage":
				_, err = tp.Stage(ctx(t), tp.stageReq("d.csi", "vol"))
			case "metrics":
				f.mu.Lock()
				f.published[tp.targetPath("vol")] = "vol"
				f.mu.Unlock()
				_, err = tp.GetMetrics(ctx(t), &volumev1.GetMetricsRequest{Driver: "d.csi", VolumeId: "vol", VolumePath: tp.targetPath("vol")})
			}
			wantCode(t, tt.call, err, tt.want)
			_, err = tp.GetCapabilities(ctx(t), &volumev1.GetCapabilitiesRequest{})
			wantCode(t, "GetCapabilities afterwards", err, codes.OK)
		})
	}
}

// TestUnreadableAnswerIsAnError: bytes that are no protobuf message fail
// every call with an error; nothing panics.
func TestUnreadableAnswerIsAnError(t *testing.T) {
	sock := filepath.Join(socketDir(t), "d.sock")
	serveGarbage(t, sock)
	tp := newTestPlugin(t, driverSpec{fake: newFakeDriver("d.csi"), socket: sock})
	calls := []struct {
		name string
		call func() error
	}{
		{"Stage", func() error { _, err := tp.Stage(ctx(t), tp.stageReq("d.csi", "vol")); return err }},
		{"Publish", func() error { _, err := tp.Publish(ctx(t), tp.publishReq("d.csi", "vol")); return err }},
		{"Unpublish", func() error {
			_, err := tp.Unpublish(ctx(t), &volumev1.UnpublishRequest{Driver: "d.csi", VolumeId: "vol", TargetPath: tp.targetPath("vol")})
			return err
		}},
	}
	for _, c := range calls {
		if err := c.call(); err == nil {
			t.Errorf("%s against a driver answering garbage: got no error", c.name)
		}
	}
	if ready, msg := tp.p.probe(ctx(t)); !ready || !strings.Contains(msg, `"d.csi"`) {
		t.Errorf("probe: got %v %q; want ready, naming d.csi", ready, msg)
	}
}

func TestUnstageAndUnpublishWithoutDirectories(t *testing.T) {
	f := newFakeDriver("d.csi", stageCap)
	tp := newTestPlugin(t, startDrivers(t, f)...)
	missing := filepath.Join(tp.dir, "never", "created")
	_, err := tp.Unstage(ctx(t), &volumev1.UnstageRequest{Driver: "d.csi", VolumeId: "vol", StagingPath: missing})
	wantCode(t, "Unstage of a missing staging path", err, codes.OK)
	_, err = tp.Unpublish(ctx(t), &volumev1.UnpublishRequest{Driver: "d.csi", VolumeId: "vol", TargetPath: missing})
	wantCode(t, "Unpublish of a missing target path", err, codes.OK)
	if got := f.methods(); !slices.Contains(got, "NodeUnstageVolume") || !slices.Contains(got, "NodeUnpublishVolume") {
		t.Errorf("driver calls: got %v; want NodeUnstageVolume and NodeUnpublishVolume sent although the paths do not exist", got)
	}
}

// TestReconstructRecord: the record of a publish is kept while the publish
// may have taken effect, and only then.
func TestReconstructRecord(t *testing.T) {
	tests := []struct {
		name      string
		code      codes.Code // NodePublishVolume's answer
		wantFound bool
	}{
		{"published", codes.OK, true},
		{"uncertain publish", codes.DeadlineExceeded, true},
		{"final publish error", codes.InvalidArgument, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeDriver("d.csi")
			f.hook = func(_ context.Context, method string) error {
				if method == "NodePublishVolume" && tt.code != codes.OK {
					return status.Error(tt.code, "injected")
				}
				return nil
			}
			tp := newTestPlugin(t, startDrivers(t, f)...)
			req := tp.publishReq("d.csi", "vol")
			req.VolumeContext = map[string]string{"k": "v"}
			req.Capability = &volumev1.Capability{
				AccessType: &volumev1.Capability_Mount{Mount: &volumev1.Capability_MountVolume{FsType: "ext4"}},
				AccessMode: volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_SINGLE_WRITER,
			}
			_, err := tp.Publish(ctx(t), req)
			wantCode(t, "Publish", err, tt.code)
			r, err := tp.Reconstruct(ctx(t), &volumev1.ReconstructRequest{TargetPath: req.TargetPath})
			wantCode(t, "Reconstruct", err, codes.OK)
			if r.GetFound() != tt.wantFound {
				t.Fatalf("Reconstruct found: got %v; want %v", r.GetFound(), tt.wantFound)
			}
			if tt.wantFound && (r.GetDriver() != "d.csi" || r.GetVolumeId() != "vol" || r.GetStagingPath() != "" ||
				r.GetVolumeContext()["k"] != "v" || r.GetCapability().GetMount().GetFsType() != "ext4" ||
				r.GetCapability().GetAccessMode() != volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_SINGLE_WRITER) {
				t.Errorf("Reconstruct: got %v; want driver d.csi, volume vol, no staging path (driver does not stage), context, ext4, single-node single-writer", r)
			}
		})
	}
}

// TestCapabilityFitsTheDriver: single-writer modes and the mount group
// reach the driver only when it advertises them; MapBlock publishes a
// block capability.
func TestCapabilityFitsTheDriver(t *testing.T) {
	mount := &volumev1.Capability{
		AccessType: &volumev1.Capability_Mount{Mount: &volumev1.Capability_MountVolume{FsType: "xfs", MountFlags: []string{"noatime"}, VolumeMountGroup: "2000"}},
		AccessMode: volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_SINGLE_WRITER,
	}
	tests := []struct {
		name      string
		caps      []csi.NodeServiceCapability_RPC_Type
		block     bool
		wantMode  csi.VolumeCapability_AccessMode_Mode
		wantGroup string
	}{
		{"plain driver", nil, false, csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER, ""},
		{"driver with single-writer modes and mount group",
			[]csi.NodeServiceCapability_RPC_Type{csi.NodeServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER, csi.NodeServiceCapability_RPC_VOLUME_MOUNT_GROUP},
			false, csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER, "2000"},
		{"block", nil, true, csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeDriver("d.csi", tt.caps...)
			tp := newTestPlugin(t, startDrivers(t, f)...)
			var err error
			if tt.block {
				_, err = tp.MapBlock(ctx(t), &volumev1.MapBlockRequest{Driver: "d.csi", VolumeId: "vol", TargetPath: tp.targetPath("vol"), Capability: mount})
			} else {
				req := tp.publishReq("d.csi", "vol")
				req.Capability = mount
				_, err = tp.Publish(ctx(t), req)
			}
			wantCode(t, "publish", err, codes.OK)
			pub, _ := f.last("NodePublishVolume").(*csi.NodePublishVolumeRequest)
			c := pub.GetVolumeCapability()
			if got := c.GetAccessMode().GetMode(); got != tt.wantMode {
				t.Errorf("access mode: got %v; want %v", got, tt.wantMode)
			}
			if tt.block {
				if c.GetBlock() == nil || c.GetMount() != nil {
					t.Errorf("MapBlock capability: got %v; want block", c)
				}
				return
			}
			if m := c.GetMount(); m.GetFsType() != "xfs" || !slices.Equal(m.GetMountFlags(), []string{"noatime"}) || m.GetVolumeMountGroup() != tt.wantGroup {
				t.Errorf("mount capability: got %v; want xfs, [noatime], group %q", m, tt.wantGroup)
			}
		})
	}
}

func TestDriverRouting(t *testing.T) {
	a, b := newFakeDriver("a.csi"), newFakeDriver("b.csi")
	tp := newTestPlugin(t, startDrivers(t, a, b)...)
	tests := []struct {
		driver string
		want   codes.Code
		fake   *fakeDriver
	}{
		{"a.csi", codes.OK, a},
		{"b.csi", codes.OK, b},
		{"c.csi", codes.FailedPrecondition, nil},
		{"", codes.InvalidArgument, nil},
	}
	for _, tt := range tests {
		_, err := tp.Publish(ctx(t), tp.publishReq(tt.driver, "vol-"+tt.driver))
		wantCode(t, "Publish with driver "+tt.driver, err, tt.want)
		if tt.fake != nil && tt.fake.count("NodePublishVolume") != 1 {
			t.Errorf("driver %s: NodePublishVolume calls %d; want 1", tt.driver, tt.fake.count("NodePublishVolume"))
		}
	}
}

func TestSecretsFromFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "password"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "..data"), 0o700); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	dangling := t.TempDir()
	if err := os.Symlink(filepath.Join(dangling, "..data", "token"), filepath.Join(dangling, "token")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		inline      map[string]string
		dir         string
		want        codes.Code
		wantSecrets map[string]string
		wantInError string
	}{
		{"inline only", map[string]string{"user": "u"}, "", codes.OK, map[string]string{"user": "u"}, ""},
		{"inline and files", map[string]string{"user": "u"}, dir, codes.OK, map[string]string{"user": "u", "password": "s3cret"}, ""},
		{"missing directory", nil, missing, codes.FailedPrecondition, nil, missing},
		{"missing file", nil, dangling, codes.FailedPrecondition, nil, filepath.Join(dangling, "token")},
		{"key given twice", map[string]string{"password": "x"}, dir, codes.InvalidArgument, nil, `"password"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeDriver("d.csi", stageCap)
			tp := newTestPlugin(t, startDrivers(t, f)...)
			req := tp.stageReq("d.csi", "vol")
			req.Secrets, req.SecretsDir = tt.inline, tt.dir
			_, err := tp.Stage(ctx(t), req)
			wantCode(t, "Stage", err, tt.want)
			if tt.wantInError != "" && !strings.Contains(status.Convert(err).Message(), tt.wantInError) {
				t.Errorf("Stage error %q: want it to name %s", status.Convert(err).Message(), tt.wantInError)
			}
			stage, _ := f.last("NodeStageVolume").(*csi.NodeStageVolumeRequest)
			if tt.want != codes.OK {
				if stage != nil {
					t.Errorf("NodeStageVolume was called after a secrets error")
				}
				return
			}
			if got := stage.GetSecrets(); len(got) != len(tt.wantSecrets) || !mapsEqual(got, tt.wantSecrets) {
				t.Errorf("NodeStageVolume secrets: got %v; want %v", got, tt.wantSecrets)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}
