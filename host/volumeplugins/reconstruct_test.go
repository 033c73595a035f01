package volumeplugins

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	"github.com/podhost/podhost/pluginapi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// reconstructClient answers Reconstruct with resp or err and records the
// target path asked about.
type reconstructClient struct {
	scsiClient
	resp   *volumev1.ReconstructResponse
	err    error
	target string
}

func (f *reconstructClient) Reconstruct(_ context.Context, r *volumev1.ReconstructRequest, _ ...grpc.CallOption) (*volumev1.ReconstructResponse, error) {
	f.target = r.GetTargetPath()
	return f.resp, f.err
}

// TestSCSIReconstruct: the host rebuilds an FC or iSCSI pod volume from
// the plugin's Reconstruct answer, named and staged as the desired state
// names them, and refuses answers that disagree.
func TestSCSIReconstruct(t *testing.T) {
	mount := &volumev1.Capability{AccessMode: volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_WRITER,
		AccessType: &volumev1.Capability_Mount{Mount: &volumev1.Capability_MountVolume{FsType: "ext4"}}}
	block := &volumev1.Capability{AccessMode: volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_WRITER,
		AccessType: &volumev1.Capability_Block{Block: &volumev1.Capability_BlockVolume{}}}
	iscsiCtx := map[string]string{"targetPortal": "10.0.0.1:3260", "iqn": "iqn.x", "lun": "0", "iscsiInterface": "default", "portals": ""}
	iscsi := &volumev1.ReconstructResponse{Found: true, VolumeId: "kubernetes.io/iscsi/10.0.0.1:3260:iqn.x:0",
		StagingPath: "ROOT/plugins/kubernetes.io~iscsi/iface-default/10.0.0.1:3260-iqn.x-lun-0", Capability: mount, VolumeContext: iscsiCtx}
	fcBlock := &volumev1.ReconstructResponse{Found: true, VolumeId: "kubernetes.io/fc/[3600a]",
		StagingPath: "ROOT/plugins/kubernetes.io~fc/volumeDevices/3600a", Capability: block, VolumeContext: map[string]string{"targetWWNs": "", "wwids": "3600a"}}
	wrongStaging := proto.Clone(iscsi).(*volumev1.ReconstructResponse)
	wrongStaging.StagingPath = "ROOT/plugins/elsewhere"
	wrongID := proto.Clone(iscsi).(*volumev1.ReconstructResponse)
	wrongID.VolumeId = "kubernetes.io/iscsi/10.0.0.9:3260:iqn.x:0"
	tests := []struct {
		name       string
		dir        volumemanager.PodVolumeDir
		caps       *volumev1.GetCapabilitiesResponse
		resp       *volumev1.ReconstructResponse
		err        error
		want       string // volume and flags, or the error
		wantTarget string
	}{
		{"iscsi filesystem", volumemanager.PodVolumeDir{Pod: "u1", Plugin: volumemanager.PluginISCSI, Name: "data"},
			&volumev1.GetCapabilitiesResponse{StageUnstage: true, Reconstruction: true}, iscsi, nil,
			"kubernetes.io/iscsi/10.0.0.1:3260:iqn.x:0 shared=true block=false fs=ext4 published=true staged=true",
			"ROOT/pods/u1/volumes/kubernetes.io~iscsi/data/mount"},
		{"fc block by wwid", volumemanager.PodVolumeDir{Pod: "u1", Plugin: volumemanager.PluginFC, Name: "raw", Block: true},
			&volumev1.GetCapabilitiesResponse{StageUnstage: true, Block: true, Reconstruction: true}, fcBlock, nil,
			"kubernetes.io/fc/[3600a] shared=true block=true fs= published=true staged=true",
			"ROOT/pods/u1/volumeDevices/kubernetes.io~fc/raw"},
		{"nothing at a target that is no mount point", volumemanager.PodVolumeDir{Pod: "u1", Plugin: volumemanager.PluginISCSI, Name: "data"},
			&volumev1.GetCapabilitiesResponse{StageUnstage: true, Reconstruction: true}, &volumev1.ReconstructResponse{}, nil,
			"error: not mounted: plugin p at ROOT/pods/u1/volumes/kubernetes.io~iscsi/data/mount: nothing is mounted at the pod volume directory",
			"ROOT/pods/u1/volumes/kubernetes.io~iscsi/data/mount"},
		{"plugin unavailable", volumemanager.PodVolumeDir{Pod: "u1", Plugin: volumemanager.PluginISCSI, Name: "data"},
			&volumev1.GetCapabilitiesResponse{StageUnstage: true, Reconstruction: true}, nil, status.Error(codes.Unavailable, "down"),
			"error: plugin p: Reconstruct: rpc error: code = Unavailable desc = down", "ROOT/pods/u1/volumes/kubernetes.io~iscsi/data/mount"},
		{"staging path disagrees", volumemanager.PodVolumeDir{Pod: "u1", Plugin: volumemanager.PluginISCSI, Name: "data"},
			&volumev1.GetCapabilitiesResponse{StageUnstage: true, Reconstruction: true}, wrongStaging, nil,
			`error: plugin p: volume kubernetes.io/iscsi/10.0.0.1:3260:iqn.x:0: staging path "ROOT/plugins/elsewhere" disagrees with the host's "ROOT/plugins/kubernetes.io~iscsi/iface-default/10.0.0.1:3260-iqn.x-lun-0" (<nil>)`,
			"ROOT/pods/u1/volumes/kubernetes.io~iscsi/data/mount"},
		{"volume id disagrees with the context", volumemanager.PodVolumeDir{Pod: "u1", Plugin: volumemanager.PluginISCSI, Name: "data"},
			&volumev1.GetCapabilitiesResponse{StageUnstage: true, Reconstruction: true}, wrongID, nil,
			`error: plugin p: volume id "kubernetes.io/iscsi/10.0.0.9:3260:iqn.x:0" disagrees with its volume context (kubernetes.io/iscsi/10.0.0.1:3260:iqn.x:0)`,
			"ROOT/pods/u1/volumes/kubernetes.io~iscsi/data/mount"},
		{"plugin does not reconstruct", volumemanager.PodVolumeDir{Pod: "u1", Plugin: volumemanager.PluginISCSI, Name: "data"},
			&volumev1.GetCapabilitiesResponse{StageUnstage: true}, iscsi, nil,
			"error: plugin p does not reconstruct volumes (GetCapabilities reconstruction)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			fix := func(s string) string { return strings.ReplaceAll(s, "ROOT", root) }
			resp := tt.resp
			if resp != nil {
				resp = proto.Clone(resp).(*volumev1.ReconstructResponse)
				resp.StagingPath = fix(resp.StagingPath)
			}
			cl := &reconstructClient{scsiClient: scsiClient{caps: tt.caps}, resp: resp, err: tt.err}
			kind := pluginapi.CapVolumeFC
			if tt.dir.Plugin == volumemanager.PluginISCSI {
				kind = pluginapi.CapVolumeISCSI
			}
			host := hostvolumes.New(root, hostvolumes.SystemMounter{})
			s := &scsiVolumes{root: root, node: "node-1", host: host, clients: fakeClients{"p": cl}, plugins: []string{"p"}, caps: declaring(map[string][]string{"p": {kind}})}
			ans, err := (&Plugins{host: host, scsi: s}).Reconstruct(context.Background(), tt.dir)
			var got string
			switch {
			case errors.Is(err, volumemanager.ErrNotMounted):
				got = "error: not mounted: " + err.Error()
			case err != nil:
				got = "error: " + err.Error()
			default:
				v := ans.Volume
				fs := ""
				if v.ISCSI != nil {
					fs = v.ISCSI.FSType
				} else if v.FC != nil {
					fs = v.FC.FSType
				}
				got = fmt.Sprintf("%s shared=%v block=%v fs=%s published=%v staged=%v", v.ID, v.Shared, v.Block, fs, ans.Published, ans.Staged)
			}
			if got = strings.ReplaceAll(got, root, "ROOT"); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if target := strings.ReplaceAll(cl.target, root, "ROOT"); target != tt.wantTarget {
				t.Errorf("asked about %q, want %q", target, tt.wantTarget)
			}
		})
	}
}
