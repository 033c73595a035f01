package main

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// A driver registered at run time serves volumes as a configured one does,
// answers with its NodeGetInfo, and is gone once deregistered.
func TestRegisterDriver(t *testing.T) {
	configured := startDrivers(t, newFakeDriver("configured.csi"))
	tp := newTestPlugin(t, configured...)
	late := newFakeDriver("late.csi", csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME)
	late.maxVolumes, late.topology = 7, map[string]string{"topology.late.csi/zone": "z1"}
	sock := filepath.Join(socketDir(t), "late.sock")
	late.serve(t, sock)

	_, err := tp.Stage(ctx(t), tp.stageReq("late.csi", "v1"))
	wantCode(t, "Stage before registration", err, codes.FailedPrecondition)

	resp, err := tp.RegisterDriver(ctx(t), &volumev1.RegisterDriverRequest{Name: "late.csi", Endpoint: sock})
	wantCode(t, "RegisterDriver", err, codes.OK)
	if resp.GetNodeId() != late.nodeID || resp.GetMaxVolumesPerNode() != 7 || !maps.Equal(resp.GetAccessibleTopology(), late.topology) {
		t.Errorf("RegisterDriver answered %v; want node %q, 7 volumes, topology %v", resp, late.nodeID, late.topology)
	}
	// Again, the same endpoint as a URL: the same driver, no error.
	_, err = tp.RegisterDriver(ctx(t), &volumev1.RegisterDriverRequest{Name: "late.csi", Endpoint: "unix://" + sock})
	wantCode(t, "RegisterDriver again", err, codes.OK)

	tp.stageAndPublish(t, "late.csi", "v1")
	if late.count("NodeStageVolume") != 1 || late.count("NodePublishVolume") != 1 {
		t.Errorf("late driver's calls: %v; want one stage and one publish", late.methods())
	}
	// The record makes it reconstructible as a configured driver's volume.
	rec, err := tp.Reconstruct(ctx(t), &volumev1.ReconstructRequest{TargetPath: tp.targetPath("v1")})
	wantCode(t, "Reconstruct", err, codes.OK)
	if !rec.GetFound() || rec.GetDriver() != "late.csi" {
		t.Errorf("Reconstruct: %v; want found, driver late.csi", rec)
	}

	_, err = tp.DeregisterDriver(ctx(t), &volumev1.DeregisterDriverRequest{Name: "late.csi"})
	wantCode(t, "DeregisterDriver", err, codes.OK)
	_, err = tp.Unpublish(ctx(t), &volumev1.UnpublishRequest{Driver: "late.csi", VolumeId: "v1", TargetPath: tp.targetPath("v1")})
	wantCode(t, "Unpublish after deregistration", err, codes.FailedPrecondition)
	_, err = tp.DeregisterDriver(ctx(t), &volumev1.DeregisterDriverRequest{Name: "late.csi"})
	wantCode(t, "DeregisterDriver twice", err, codes.OK)
	// The configured driver never noticed.
	tp.stageAndPublish(t, "configured.csi", "v2")
}

// Bad registrations are refused with the field they got wrong, and leave
// nothing registered.
func TestRegisterDriverRefused(t *testing.T) {
	configured := startDrivers(t, newFakeDriver("configured.csi"))
	tp := newTestPlugin(t, configured...)
	other := newFakeDriver("other.csi")
	sock := filepath.Join(socketDir(t), "other.sock")
	other.serve(t, sock)
	for _, c := range []struct {
		name, endpoint string
		code           codes.Code
		want           string
	}{
		{"", sock, codes.InvalidArgument, "name: is required"},
		{"configured.csi", configured[0].socket, codes.InvalidArgument, `name: "configured.csi" is a driver of the plugin's config`},
		{"x.csi", "relative.sock", codes.InvalidArgument, "endpoint:"},
		{"x.csi", sock, codes.Aborted, `GetPluginInfo names it "other.csi"`},
		{"x.csi", filepath.Join(t.TempDir(), "nobody.sock"), codes.Unavailable, "x.csi"},
	} {
		_, err := tp.RegisterDriver(ctx(t), &volumev1.RegisterDriverRequest{Name: c.name, Endpoint: c.endpoint})
		wantCode(t, "RegisterDriver "+c.name+" at "+c.endpoint, err, c.code)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RegisterDriver %q at %s: %v; want it to say %q", c.name, c.endpoint, err, c.want)
		}
	}
	if n := len(tp.p.registered); n != 0 {
		t.Errorf("%d drivers registered after refusals; want none", n)
	}
}
