package volumeplugins

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	"github.com/podhost/podhost/pluginapi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// metricsClient is a volume plugin's client that answers GetCapabilities
// and GetMetrics and records every call.
type metricsClient struct {
	volumev1.VolumeClient
	supports bool
	resp     *volumev1.GetMetricsResponse
	err      error
	calls    []string
}

func (f *metricsClient) GetCapabilities(context.Context, *volumev1.GetCapabilitiesRequest, ...grpc.CallOption) (*volumev1.GetCapabilitiesResponse, error) {
	f.calls = append(f.calls, "GetCapabilities")
	return &volumev1.GetCapabilitiesResponse{StageUnstage: true, SupportsMetrics: f.supports}, nil
}

func (f *metricsClient) GetMetrics(_ context.Context, r *volumev1.GetMetricsRequest, _ ...grpc.CallOption) (*volumev1.GetMetricsResponse, error) {
	f.calls = append(f.calls, "GetMetrics "+r.GetVolumeId()+" "+r.GetVolumePath()+" staged="+boolString(r.GetStagingPath() != ""))
	return f.resp, f.err
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestCSIMetricsDeclaredTwice: the host asks a plugin for metrics only
// when it declares them in GetInfo and in GetCapabilities, judged from
// the calls the plugin gets; its answer maps field by field, and
// UNIMPLEMENTED means no metrics for the volume.
func TestCSIMetricsDeclaredTwice(t *testing.T) {
	resp := &volumev1.GetMetricsResponse{TotalBytes: 100, AvailableBytes: 60, UsedBytes: 30, TotalInodes: 10, AvailableInodes: 7, UsedInodes: 3}
	tests := []struct {
		name      string
		info      []string
		supports  bool
		err       error
		wantCalls string
		want      volumemanager.VolumeUsage
		wantErr   error
	}{
		{"declared twice", []string{pluginapi.CapVolumeMetrics}, true, nil, "GetCapabilities,GetMetrics h1 ROOT/pods/u1/volumes/kubernetes.io~csi/data/mount staged=true",
			volumemanager.VolumeUsage{CapacityBytes: 100, AvailableBytes: 60, UsedBytes: 30, Inodes: 10, InodesFree: 7, InodesUsed: 3}, nil},
		{"only in GetInfo", []string{pluginapi.CapVolumeMetrics}, false, nil, "GetCapabilities", volumemanager.VolumeUsage{}, nil},
		{"only in GetCapabilities", []string{pluginapi.CapVolumeBlock}, true, nil, "", volumemanager.VolumeUsage{}, nil},
		{"unimplemented for the volume", []string{pluginapi.CapVolumeMetrics}, true, status.Error(codes.Unimplemented, "driver has no volume stats"),
			"GetCapabilities,GetMetrics h1 ROOT/pods/u1/volumes/kubernetes.io~csi/data/mount staged=true", volumemanager.VolumeUsage{}, volumemanager.ErrMetricsNotSupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			cl := &metricsClient{supports: tt.supports, resp: resp, err: tt.err}
			c := &csiVolumes{root: root, host: hostvolumes.New(root, nil), clients: fakeClients{"csi": cl}, routes: map[string]string{"loop": "csi"}}
			m := &Plugins{csi: c, caps: func(name string) ([]string, error) {
				if name != "csi" {
					t.Errorf("capabilities of plugin %q, want csi", name)
				}
				return tt.info, nil
			}}
			pv := volumemanager.PodVolume{Pod: "u1", Name: "data", Claim: types.NamespacedName{Namespace: "ns", Name: "data"}, Volume: volumemanager.Volume{
				ID: "kubernetes.io/csi/loop^h1", Plugin: volumemanager.PluginCSI, Shared: true, PV: "pv1",
				CSI: &v1.CSIPersistentVolumeSource{Driver: "loop", VolumeHandle: "h1"},
			}}
			ctx := context.Background()
			ok, err := m.SupportsMetrics(ctx, pv.Volume)
			if err != nil {
				t.Fatal(err)
			}
			var got volumemanager.VolumeUsage
			if ok {
				got, err = m.GetMetrics(ctx, pv)
			}
			if calls := strings.ReplaceAll(strings.Join(cl.calls, ","), root, "ROOT"); calls != tt.wantCalls {
				t.Errorf("calls %q, want %q", calls, tt.wantCalls)
			}
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("usage %+v, %v; want %+v, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
	// The host's own volumes are not asked about at all.
	m := &Plugins{caps: func(string) ([]string, error) { t.Error("capabilities asked for an emptyDir"); return nil, nil }}
	if ok, err := m.SupportsMetrics(context.Background(), volumemanager.Volume{Plugin: volumemanager.PluginEmptyDir}); ok || err != nil {
		t.Errorf("emptyDir supports metrics: %v, %v", ok, err)
	}
}
