package volumeplugins

import (
	"context"
	"errors"
	"maps"
	"testing"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// volumeContextClient records the volume context of each stage and
// publish.
type volumeContextClient struct {
	volumev1.VolumeClient
	stage, publish map[string]string
}

func (f *volumeContextClient) Stage(_ context.Context, r *volumev1.StageRequest, _ ...grpc.CallOption) (*volumev1.StageResponse, error) {
	f.stage = r.GetVolumeContext()
	return &volumev1.StageResponse{}, nil
}

func (f *volumeContextClient) Publish(_ context.Context, r *volumev1.PublishRequest, _ ...grpc.CallOption) (*volumev1.PublishResponse, error) {
	f.publish = r.GetVolumeContext()
	return &volumev1.PublishResponse{}, nil
}

// TestPodInfoOnMount: a driver whose CSIDriver asks for the pod's
// information (podInfoOnMount) gets the kubelet's five keys in each
// publish's volume context, with ephemeral true only for an inline volume,
// and never in a stage; a driver that does not ask gets the volume's
// attributes alone; outside Kubernetes mode (no CSIDriver to ask) an
// inline volume says it is ephemeral and whose; a failed lookup is
// transient and sends nothing.
func TestPodInfoOnMount(t *testing.T) {
	pod := volumemanager.MountArgs{Pod: volumemanager.PodInfo{Name: "web-0", Namespace: "shop", ServiceAccount: "web", UID: "u1"}}
	attrs := map[string]string{"size": "1Gi"}
	inline := volumemanager.Volume{ID: "kubernetes.io/csi/hp^csi-abc", Plugin: volumemanager.PluginCSI,
		CSI: &v1.CSIPersistentVolumeSource{Driver: "hp", VolumeHandle: "csi-abc", VolumeAttributes: attrs}}
	claimed := volumemanager.Volume{ID: "kubernetes.io/csi/hp^h1", Plugin: volumemanager.PluginCSI, Shared: true, PV: "pv1",
		CSI: &v1.CSIPersistentVolumeSource{Driver: "hp", VolumeHandle: "h1", VolumeAttributes: attrs}}
	info := func(ephemeral string) map[string]string {
		return map[string]string{"size": "1Gi", "csi.storage.k8s.io/pod.name": "web-0", "csi.storage.k8s.io/pod.namespace": "shop",
			"csi.storage.k8s.io/pod.uid": "u1", "csi.storage.k8s.io/serviceAccount.name": "web", "csi.storage.k8s.io/ephemeral": ephemeral}
	}
	lookup := func(want bool, err error) func(context.Context, string) (bool, error) {
		return func(_ context.Context, driver string) (bool, error) {
			if driver != "hp" {
				t.Errorf("asked about driver %q", driver)
			}
			return want, err
		}
	}
	for _, tc := range []struct {
		name        string
		podInfo     func(context.Context, string) (bool, error)
		vol         volumemanager.Volume
		wantPublish map[string]string
	}{
		{"podInfoOnMount, inline", lookup(true, nil), inline, info("true")},
		{"podInfoOnMount, claimed", lookup(true, nil), claimed, info("false")},
		{"not asked, inline", lookup(false, nil), inline, attrs},
		{"not asked, claimed", lookup(false, nil), claimed, attrs},
		{"no CSIDriver objects, inline", nil, inline, map[string]string{"size": "1Gi", "csi.storage.k8s.io/ephemeral": "true", "csi.storage.k8s.io/pod.uid": "u1"}},
		{"no CSIDriver objects, claimed", nil, claimed, attrs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cl := &volumeContextClient{}
			c := &csiVolumes{root: root, host: hostvolumes.New(root, nil), clients: fakeClients{"csi": cl}, routes: map[string]string{"hp": "csi"}, podInfo: tc.podInfo}
			if tc.vol.Shared {
				if err := c.Stage(t.Context(), tc.vol); err != nil {
					t.Fatal(err)
				}
				if !maps.Equal(cl.stage, attrs) {
					t.Errorf("stage's volume context %v; want the attributes alone", cl.stage)
				}
			}
			if err := c.Publish(t.Context(), volumemanager.PodVolume{Pod: "u1", Name: "data", Volume: tc.vol, Args: pod}); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(cl.publish, tc.wantPublish) {
				t.Errorf("publish's volume context %v; want %v", cl.publish, tc.wantPublish)
			}
		})
	}

	root := t.TempDir()
	cl := &volumeContextClient{}
	c := &csiVolumes{root: root, host: hostvolumes.New(root, nil), clients: fakeClients{"csi": cl}, routes: map[string]string{"hp": "csi"},
		podInfo: lookup(false, errors.New("connection refused"))}
	err := c.Publish(t.Context(), volumemanager.PodVolume{Pod: "u1", Name: "data", Volume: inline, Args: pod})
	if err == nil || Classify(err) != volumemanager.Transient || cl.publish != nil {
		t.Errorf("lookup failed: %v (%v), publish sent %v; want a transient error and no publish", err, Classify(err), cl.publish)
	}
}
