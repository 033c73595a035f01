package volumeplugins

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/supervisor"
	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/apivolumes"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	"github.com/podhost/podhost/pluginapi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// registerClient is a plugin that takes registered drivers.
type registerClient struct {
	fakeVolumeClient
	registered []string
}

func (f *registerClient) RegisterDriver(_ context.Context, r *volumev1.RegisterDriverRequest, _ ...grpc.CallOption) (*volumev1.RegisterDriverResponse, error) {
	f.registered = append(f.registered, "+"+r.GetName()+" "+r.GetEndpoint())
	return &volumev1.RegisterDriverResponse{NodeId: "n1", MaxVolumesPerNode: 3, AccessibleTopology: map[string]string{"zone": "a"}}, nil
}

func (f *registerClient) DeregisterDriver(_ context.Context, r *volumev1.DeregisterDriverRequest, _ ...grpc.CallOption) (*volumev1.DeregisterDriverResponse, error) {
	f.registered = append(f.registered, "-"+r.GetName())
	return &volumev1.DeregisterDriverResponse{}, nil
}

// A driver registered at run time goes to the plugin that declares
// volume.csi.registration, and its volumes with it; a driver of a
// plugin's config is refused naming the field; two plugins declaring the
// capability are a conflict.
func TestRegisterCSIDriver(t *testing.T) {
	root := t.TempDir()
	late, static := &registerClient{}, &fakeVolumeClient{}
	caps := map[string][]string{"csi": {pluginapi.CapVolumeCSIRegistration}, "static": nil}
	specs := []supervisor.PluginSpec{
		{Name: "csi", Kind: pluginapi.KindVolume, Config: []byte(`{"drivers":[]}`)},
		{Name: "static", Kind: pluginapi.KindVolume, Config: []byte(`{"drivers":[{"name":"configured.csi"}]}`)},
	}
	p, err := New(Config{
		Root: root, Host: hostvolumes.New(root, nil), API: &apivolumes.Volumes{}, Specs: specs,
		Clients:      fakeClients{"csi": late, "static": static},
		Capabilities: func(name string) ([]string, error) { return caps[name], nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	info, err := p.RegisterCSIDriver(ctx, "late.csi", "/run/late.sock")
	if err != nil || info.NodeID != "n1" || info.MaxVolumes != 3 || info.Topology["zone"] != "a" {
		t.Errorf("RegisterCSIDriver: %+v, %v; want node n1, 3 volumes, zone a", info, err)
	}
	if _, err := p.RegisterCSIDriver(ctx, "configured.csi", "/run/c.sock"); err == nil ||
		!strings.Contains(err.Error(), `name: csi driver "configured.csi" is listed in plugin static's config.drivers`) {
		t.Errorf("registering a configured driver: %v; want refused naming name", err)
	}
	if err := p.DeregisterCSIDriver(ctx, "late.csi"); err != nil {
		t.Error(err)
	}
	if got := strings.Join(late.registered, ","); got != "+late.csi /run/late.sock,-late.csi" {
		t.Errorf("registration calls %q", got)
	}
	vol := func(driver string) volumemanager.Volume {
		return volumemanager.Volume{ID: volumemanager.VolumeID("kubernetes.io/csi/" + driver + "^h"), Plugin: volumemanager.PluginCSI, Shared: true, PV: "pv",
			CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "h"}}
	}
	for _, d := range []string{"late.csi", "configured.csi"} {
		if err := p.Stage(ctx, vol(d)); err != nil {
			t.Errorf("stage of %s: %v", d, err)
		}
	}
	if late.calls[0] != "stage late.csi h true" || static.calls[0] != "stage configured.csi h true" {
		t.Errorf("stages went to csi %v and static %v; want each driver's", late.calls, static.calls)
	}

	caps["static"] = []string{pluginapi.CapVolumeCSIRegistration}
	if _, err := p.RegisterCSIDriver(ctx, "x.csi", "/x.sock"); !errors.Is(err, ErrVolumePluginConflict) {
		t.Errorf("two plugins declaring %s: %v; want a conflict", pluginapi.CapVolumeCSIRegistration, err)
	}
}
