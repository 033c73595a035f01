package volumeplugins

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	"github.com/podhost/podhost/pluginapi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// scsiClient records the calls of an FC or iSCSI plugin.
type scsiClient struct {
	volumev1.VolumeClient
	caps  *volumev1.GetCapabilitiesResponse
	calls []string
}

func (f *scsiClient) GetCapabilities(context.Context, *volumev1.GetCapabilitiesRequest, ...grpc.CallOption) (*volumev1.GetCapabilitiesResponse, error) {
	return f.caps, nil
}

func kv(m map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] != "" {
			out = append(out, k+"="+m[k])
		}
	}
	return strings.Join(out, ",")
}

func (f *scsiClient) Attach(_ context.Context, r *volumev1.AttachRequest, _ ...grpc.CallOption) (*volumev1.AttachResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("attach %s node=%s %s", r.GetVolumeId(), r.GetNodeId(), kv(r.GetVolumeContext())))
	return &volumev1.AttachResponse{PublishContext: map[string]string{"disk": "sdb"}}, nil
}

func (f *scsiClient) Stage(_ context.Context, r *volumev1.StageRequest, _ ...grpc.CallOption) (*volumev1.StageResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("stage %s %s pc=%s block=%v fs=%s flags=%s secrets=%s %s", r.GetVolumeId(), r.GetStagingPath(), kv(r.GetPublishContext()),
		r.GetCapability().GetBlock() != nil, r.GetCapability().GetMount().GetFsType(), strings.Join(r.GetCapability().GetMount().GetMountFlags(), ","),
		r.GetSecretsDir(), kv(r.GetVolumeContext())))
	return &volumev1.StageResponse{}, nil
}

func (f *scsiClient) Unstage(_ context.Context, r *volumev1.UnstageRequest, _ ...grpc.CallOption) (*volumev1.UnstageResponse, error) {
	f.calls = append(f.calls, "unstage "+r.GetVolumeId()+" "+r.GetStagingPath())
	return &volumev1.UnstageResponse{}, nil
}

func (f *scsiClient) Detach(_ context.Context, r *volumev1.DetachRequest, _ ...grpc.CallOption) (*volumev1.DetachResponse, error) {
	f.calls = append(f.calls, "detach "+r.GetVolumeId()+" "+kv(r.GetVolumeContext()))
	return &volumev1.DetachResponse{}, nil
}

func (f *scsiClient) Publish(_ context.Context, r *volumev1.PublishRequest, _ ...grpc.CallOption) (*volumev1.PublishResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("publish %s %s %s ro=%v", r.GetVolumeId(), r.GetStagingPath(), r.GetTargetPath(), r.GetReadonly()))
	return &volumev1.PublishResponse{}, nil
}

func (f *scsiClient) Unpublish(_ context.Context, r *volumev1.UnpublishRequest, _ ...grpc.CallOption) (*volumev1.UnpublishResponse, error) {
	f.calls = append(f.calls, "unpublish "+r.GetVolumeId()+" "+r.GetTargetPath())
	return &volumev1.UnpublishResponse{}, nil
}

func (f *scsiClient) MapBlock(_ context.Context, r *volumev1.MapBlockRequest, _ ...grpc.CallOption) (*volumev1.MapBlockResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("map %s %s %s", r.GetVolumeId(), r.GetStagingPath(), r.GetTargetPath()))
	return &volumev1.MapBlockResponse{}, nil
}

func (f *scsiClient) UnmapBlock(_ context.Context, r *volumev1.UnmapBlockRequest, _ ...grpc.CallOption) (*volumev1.UnmapBlockResponse, error) {
	f.calls = append(f.calls, "unmap "+r.GetVolumeId()+" "+r.GetTargetPath())
	return &volumev1.UnmapBlockResponse{}, nil
}

func declaring(m map[string][]string) Capabilities {
	return func(name string) ([]string, error) {
		if c, ok := m[name]; ok {
			return c, nil
		}
		return nil, errors.New("not running")
	}
}

// TestSCSIRoute: an FC or iSCSI volume goes to the one plugin that
// declares its kind in GetInfo; none is ErrNoVolumePlugin, two is an
// error naming both; a plugin that is not running is left out.
func TestSCSIRoute(t *testing.T) {
	tests := []struct {
		name     string
		declared map[string][]string
		kind     string
		want     string // plugin, or the error's substring
	}{
		{"one each", map[string][]string{"fc": {pluginapi.CapVolumeFC}, "iscsi": {pluginapi.CapVolumeISCSI, pluginapi.CapVolumeBlock}}, volumemanager.PluginISCSI, "iscsi"},
		{"none", map[string][]string{"csi": {pluginapi.CapVolumeMetrics}}, volumemanager.PluginFC, "no volume plugin serves the volume: kubernetes.io/fc (no plugin declares volume.fc)"},
		{"two", map[string][]string{"fc": {pluginapi.CapVolumeFC}, "fc2": {pluginapi.CapVolumeFC}}, volumemanager.PluginFC, `plugins "fc" and "fc2" both declare volume.fc`},
		{"the other not running", map[string][]string{"fc2": {pluginapi.CapVolumeFC}}, volumemanager.PluginFC, "fc2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scsiVolumes{plugins: []string{"csi", "fc", "fc2", "iscsi"}, caps: declaring(tt.declared)}
			got, err := s.route(tt.kind)
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("route %q, want %q", got, tt.want)
			}
			if strings.Contains(tt.name, "two") != (s.check() != nil) {
				t.Errorf("check: %v", s.check())
			}
		})
	}
}

// TestSCSIVolumeCalls: the calls an FC or iSCSI volume makes, with the
// paths, the volume context the plugins read and the secrets directory;
// Attach and Detach only when the plugin requires them.
func TestSCSIVolumeCalls(t *testing.T) {
	lun := int32(2)
	fcVol := volumemanager.Volume{ID: "kubernetes.io/fc/[w1 w2]:2", Plugin: volumemanager.PluginFC, Shared: true, PV: "fc-pv",
		FC: &v1.FCVolumeSource{TargetWWNs: []string{"w1", "w2"}, Lun: &lun, FSType: "xfs"}, MountOptions: []string{"noatime", "logbsize=256k"}}
	iscsiVol := volumemanager.Volume{ID: "kubernetes.io/iscsi/10.0.0.1:3260:iqn.x:0", Plugin: volumemanager.PluginISCSI, Shared: true, PV: "i-pv",
		ISCSI: &v1.ISCSIPersistentVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: "iqn.x", Portals: []string{"10.0.0.2"}, SessionCHAPAuth: true,
			SecretRef: &v1.SecretReference{Name: "chap"}}}
	blockVol := fcVol
	blockVol.Block, blockVol.FC = true, &v1.FCVolumeSource{WWIDs: []string{"3600a", "3600b"}} // mount options are not for a device
	tests := []struct {
		name string
		vol  volumemanager.Volume
		caps *volumev1.GetCapabilitiesResponse
		want []string
	}{
		{"fc filesystem with attach", fcVol, &volumev1.GetCapabilitiesResponse{RequiresAttach: true, StageUnstage: true}, []string{
			"attach kubernetes.io/fc/[w1 w2]:2 node=node-1 lun=2,targetWWNs=w1,w2",
			"stage kubernetes.io/fc/[w1 w2]:2 ROOT/plugins/kubernetes.io~fc/w1-w2-lun-2 pc=disk=sdb block=false fs=xfs flags=noatime,logbsize=256k secrets= lun=2,targetWWNs=w1,w2",
			"publish kubernetes.io/fc/[w1 w2]:2 ROOT/plugins/kubernetes.io~fc/w1-w2-lun-2 ROOT/pods/u1/volumes/kubernetes.io~fc/data/mount ro=false",
			"unpublish kubernetes.io/fc/[w1 w2]:2 ROOT/pods/u1/volumes/kubernetes.io~fc/data/mount",
			"unstage kubernetes.io/fc/[w1 w2]:2 ROOT/plugins/kubernetes.io~fc/w1-w2-lun-2",
			"detach kubernetes.io/fc/[w1 w2]:2 lun=2,targetWWNs=w1,w2",
		}},
		{"iscsi with chap, no attach", iscsiVol, &volumev1.GetCapabilitiesResponse{StageUnstage: true}, []string{
			"stage kubernetes.io/iscsi/10.0.0.1:3260:iqn.x:0 ROOT/plugins/kubernetes.io~iscsi/iface-default/10.0.0.1:3260-iqn.x-lun-0 pc= block=false fs= flags= secrets=ROOT/secrets/default/chap " +
				"chapAuthSession=true,iqn=iqn.x,iscsiInterface=default,lun=0,portals=10.0.0.2,targetPortal=10.0.0.1:3260",
			"publish kubernetes.io/iscsi/10.0.0.1:3260:iqn.x:0 ROOT/plugins/kubernetes.io~iscsi/iface-default/10.0.0.1:3260-iqn.x-lun-0 ROOT/pods/u1/volumes/kubernetes.io~iscsi/data/mount ro=false",
			"unpublish kubernetes.io/iscsi/10.0.0.1:3260:iqn.x:0 ROOT/pods/u1/volumes/kubernetes.io~iscsi/data/mount",
			"unstage kubernetes.io/iscsi/10.0.0.1:3260:iqn.x:0 ROOT/plugins/kubernetes.io~iscsi/iface-default/10.0.0.1:3260-iqn.x-lun-0",
		}},
		{"fc block by wwids", blockVol, &volumev1.GetCapabilitiesResponse{StageUnstage: true, Block: true}, []string{
			"stage kubernetes.io/fc/[w1 w2]:2 ROOT/plugins/kubernetes.io~fc/volumeDevices/3600a-3600b pc= block=true fs= flags= secrets= wwids=3600a,3600b",
			"map kubernetes.io/fc/[w1 w2]:2 ROOT/plugins/kubernetes.io~fc/volumeDevices/3600a-3600b ROOT/pods/u1/volumeDevices/kubernetes.io~fc/data",
			"unmap kubernetes.io/fc/[w1 w2]:2 ROOT/pods/u1/volumeDevices/kubernetes.io~fc/data",
			"unstage kubernetes.io/fc/[w1 w2]:2 ROOT/plugins/kubernetes.io~fc/volumeDevices/3600a-3600b",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			cl := &scsiClient{caps: tt.caps}
			kind := pluginapi.CapVolumeFC
			if tt.vol.ISCSI != nil {
				kind = pluginapi.CapVolumeISCSI
			}
			host := hostvolumes.New(root, nil)
			s := &scsiVolumes{root: root, node: "node-1", host: host, clients: fakeClients{"p": cl}, plugins: []string{"p"}, caps: declaring(map[string][]string{"p": {kind}})}
			p := &Plugins{host: host, scsi: s}
			ctx := context.Background()
			pv := volumemanager.PodVolume{Pod: types.UID("u1"), Name: "data", Volume: tt.vol}
			publish, unpublish := p.Publish, p.Unpublish
			if tt.vol.Block {
				publish, unpublish = p.Map, p.Unmap
			}
			for _, step := range []error{p.Stage(ctx, tt.vol), publish(ctx, pv), unpublish(ctx, pv), p.Unstage(ctx, tt.vol)} {
				if step != nil {
					t.Fatal(step)
				}
			}
			if got := strings.ReplaceAll(strings.Join(cl.calls, "\n"), root, "ROOT"); got != strings.Join(tt.want, "\n") {
				t.Errorf("calls\n%s\nwant\n%s", got, strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestSCSIVolumeRefused: a source the host cannot hand over fails
// finally, before any call, naming the field.
func TestSCSIVolumeRefused(t *testing.T) {
	name := "iqn.x:client"
	tests := []struct {
		name string
		vol  volumemanager.Volume
		want string
	}{
		{"initiator name", volumemanager.Volume{Plugin: volumemanager.PluginISCSI, PV: "pv1", ISCSI: &v1.ISCSIPersistentVolumeSource{TargetPortal: "p", IQN: "iqn.x", InitiatorName: &name}},
			"persistentVolume pv1 spec.iscsi.initiatorName: not supported"},
		{"a slash in the iqn", volumemanager.Volume{Plugin: volumemanager.PluginISCSI, PV: "pv1", ISCSI: &v1.ISCSIPersistentVolumeSource{TargetPortal: "p", IQN: "../../etc"}},
			`persistentVolume pv1 spec.iscsi: "p-../../etc-lun-0" cannot name a directory`},
		{"a block volume on a plugin without block", volumemanager.Volume{Plugin: volumemanager.PluginFC, Block: true, FC: &v1.FCVolumeSource{WWIDs: []string{"a"}}},
			"plugin p maps no raw block volumes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := &scsiClient{caps: &volumev1.GetCapabilitiesResponse{StageUnstage: true}}
			root := t.TempDir()
			s := &scsiVolumes{root: root, host: hostvolumes.New(root, nil), clients: fakeClients{"p": cl}, plugins: []string{"p"},
				caps: declaring(map[string][]string{"p": {pluginapi.CapVolumeFC, pluginapi.CapVolumeISCSI}})}
			err := s.Stage(context.Background(), tt.vol)
			if err == nil || !strings.Contains(err.Error(), tt.want) || Classify(err) != volumemanager.Final {
				t.Errorf("err %v (%v), want a final error with %q", err, Classify(err), tt.want)
			}
			if len(cl.calls) > 0 {
				t.Errorf("calls %q, want none", cl.calls)
			}
		})
	}
}

// TestSCSIBlockMetrics: a block FC volume's capacity comes from its
// plugin, asked about the pod's device file, only when the plugin
// declares metrics in GetInfo and GetCapabilities.
func TestSCSIBlockMetrics(t *testing.T) {
	lun := int32(0)
	pv := volumemanager.PodVolume{Pod: "u1", Name: "disk", Claim: types.NamespacedName{Namespace: "ns", Name: "disk"}, Volume: volumemanager.Volume{
		ID: "kubernetes.io/fc/[w1]:0", Plugin: volumemanager.PluginFC, Shared: true, Block: true, FC: &v1.FCVolumeSource{TargetWWNs: []string{"w1"}, Lun: &lun},
	}}
	tests := []struct {
		name      string
		info      []string
		supports  bool
		wantCalls string
		want      int64
	}{
		{"declared", []string{pluginapi.CapVolumeFC, pluginapi.CapVolumeMetrics}, true, "GetCapabilities,GetMetrics kubernetes.io/fc/[w1]:0 ROOT/pods/u1/volumeDevices/kubernetes.io~fc/disk staged=true", 64 << 20},
		{"not in GetInfo", []string{pluginapi.CapVolumeFC}, true, "", 0},
		{"not in GetCapabilities", []string{pluginapi.CapVolumeFC, pluginapi.CapVolumeMetrics}, false, "GetCapabilities", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			cl := &metricsClient{supports: tt.supports, resp: &volumev1.GetMetricsResponse{TotalBytes: 64 << 20}}
			s := &scsiVolumes{root: root, host: hostvolumes.New(root, nil), clients: fakeClients{"fc": cl}, plugins: []string{"fc"}, caps: declaring(map[string][]string{"fc": tt.info})}
			m := &Plugins{scsi: s, caps: s.caps}
			ok, err := m.SupportsMetrics(context.Background(), pv.Volume)
			if err != nil {
				t.Fatal(err)
			}
			var got volumemanager.VolumeUsage
			if ok {
				if got, err = m.GetMetrics(context.Background(), pv); err != nil {
					t.Fatal(err)
				}
			}
			if calls := strings.ReplaceAll(strings.Join(cl.calls, ","), root, "ROOT"); calls != tt.wantCalls || got.CapacityBytes != tt.want {
				t.Errorf("calls %q, capacity %d; want %q, %d", calls, got.CapacityBytes, tt.wantCalls, tt.want)
			}
		})
	}
}
