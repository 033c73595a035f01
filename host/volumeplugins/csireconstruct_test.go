package volumeplugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// TestCSIReconstruct: a CSI pod volume directory found after a restart
// (state.db lost) goes to the Reconstruct of the plugin serving the driver
// its own data (vol_data.json) names; what the plugin does not know is
// rebuilt from that data, uncertain, so that it is unpublished and
// unstaged through the driver. Without data or plugin answer an empty
// directory is nothing mounted, and a mounted one an error.
func TestCSIReconstruct(t *testing.T) {
	mountCap := &volumev1.Capability{AccessMode: volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_WRITER,
		AccessType: &volumev1.Capability_Mount{Mount: &volumev1.Capability_MountVolume{FsType: "ext4"}}}
	shared := &volumev1.ReconstructResponse{Found: true, VolumeId: "h1", Driver: "loop", Capability: mountCap,
		StagingPath: "ROOT/plugins/kubernetes.io~csi/loop/" + sha("h1") + "/globalmount"}
	sharedData := `{"driverName":"loop","volumeHandle":"h1","specVolID":"data","volumeLifecycleMode":"Persistent","persistentVolume":"pv1"}`
	inlineData := `{"driverName":"loop","volumeHandle":"u1-data","specVolID":"data","volumeLifecycleMode":"Ephemeral"}`
	tests := []struct {
		name    string
		data    string // vol_data.json; empty for none
		resp    *volumev1.ReconstructResponse
		err     error
		mounted bool
		want    string
	}{
		{"the plugin's record, mounted", sharedData, shared, nil, true,
			"kubernetes.io/csi/loop^h1 driver=loop handle=h1 shared=true pv=pv1 published=true staged=true"},
		{"the plugin's record, no data of the directory", "", shared, nil, true,
			"kubernetes.io/csi/loop^h1 driver=loop handle=h1 shared=true pv= published=true staged=true"},
		{"the plugin's record, the mount gone", sharedData, shared, nil, false,
			"kubernetes.io/csi/loop^h1 driver=loop handle=h1 shared=true pv=pv1 published=false staged=false"},
		{"no record of the plugin: the directory's data", sharedData, &volumev1.ReconstructResponse{}, nil, true,
			"kubernetes.io/csi/loop^h1 driver=loop handle=h1 shared=true pv=pv1 published=true staged=true"},
		{"plugin down: the directory's data, inline", inlineData, nil, status.Error(codes.Unavailable, "down"), false,
			"kubernetes.io/csi/u1-data driver=loop handle=u1-data shared=false pv= published=false staged=false"},
		{"a failed inline volume's empty directory", "", &volumev1.ReconstructResponse{}, nil, false,
			"not mounted"},
		{"plugin down, no data", "", nil, status.Error(codes.Unavailable, "down"), false,
			"error: plugin csi: Reconstruct: rpc error: code = Unavailable desc = down"},
		{"unknown mount, no data", "", &volumev1.ReconstructResponse{}, nil, true,
			"error: no csi volume plugin knows the volume mounted at ROOT/pods/u1/volumes/kubernetes.io~csi/data/mount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := hostvolumes.PodVolumeDir(root, "u1", volumemanager.PluginCSI, "data")
			if err := os.MkdirAll(filepath.Join(dir, "mount"), 0o750); err != nil {
				t.Fatal(err)
			}
			if tt.data != "" {
				if err := os.WriteFile(filepath.Join(dir, "vol_data.json"), []byte(tt.data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			table := mountPoints{filepath.Join(dir, "mount"): tt.mounted}
			resp := tt.resp
			if resp != nil && resp.StagingPath != "" {
				resp = proto.Clone(resp).(*volumev1.ReconstructResponse)
				resp.StagingPath = strings.ReplaceAll(resp.StagingPath, "ROOT", root)
			}
			cl := &reconstructClient{scsiClient: scsiClient{caps: &volumev1.GetCapabilitiesResponse{StageUnstage: true, Reconstruction: true}}, resp: resp, err: tt.err}
			host := hostvolumes.New(root, table)
			p := &Plugins{host: host, csi: &csiVolumes{root: root, host: host, clients: fakeClients{"csi": cl}, routes: map[string]string{"loop": "csi"}}}
			ans, err := p.Reconstruct(context.Background(), volumemanager.PodVolumeDir{Pod: "u1", Plugin: volumemanager.PluginCSI, Name: "data"})
			var got string
			switch {
			case errors.Is(err, volumemanager.ErrNotMounted):
				got = "not mounted"
			case err != nil:
				got = "error: " + err.Error()
			default:
				v := ans.Volume
				if v.CSI == nil {
					t.Fatalf("volume %+v without a csi source", v)
				}
				got = fmt.Sprintf("%s driver=%s handle=%s shared=%v pv=%s published=%v staged=%v", v.ID, v.CSI.Driver, v.CSI.VolumeHandle, v.Shared, v.PV, ans.Published, ans.Staged)
			}
			if got = strings.ReplaceAll(got, root, "ROOT"); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
