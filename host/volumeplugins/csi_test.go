package volumeplugins

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"

	"github.com/podhost/podhost/host/supervisor"
	"github.com/podhost/podhost/host/volumemanager"
	"github.com/podhost/podhost/host/volumemanager/hostvolumes"
	"github.com/podhost/podhost/pluginapi"
	"github.com/podhost/podhost/pluginapi/volumeerr"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

func TestCSIDriverRoutes(t *testing.T) {
	vol := func(name, cfg string) supervisor.PluginSpec {
		return supervisor.PluginSpec{Name: name, Kind: pluginapi.KindVolume, Config: []byte(cfg)}
	}
	tests := []struct {
		name    string
		specs   []supervisor.PluginSpec
		want    string // driver=plugin, sorted by the map's print
		wantErr string
	}{
		{"one plugin, two drivers", []supervisor.PluginSpec{vol("csi", `{"drivers":[{"name":"a"},{"name":"b"}]}`)}, "map[a:csi b:csi]", ""},
		{"plugins without drivers", []supervisor.PluginSpec{vol("fc", ``), vol("odd", `{"drivers":"x"}`), {Name: "rt", Kind: pluginapi.KindRuntime, Config: []byte(`{"drivers":[{"name":"a"}]}`)}}, "map[]", ""},
		{"a driver listed twice", []supervisor.PluginSpec{vol("csi1", `{"drivers":[{"name":"a"}]}`), vol("csi2", `{"drivers":[{"name":"a"}]}`)}, "", `plugins "csi1" and "csi2" both list csi driver "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := csiDriverRoutes(tt.specs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != tt.want {
				t.Fatalf("routes %v, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// TestEdgeErrorClasses checks the one translation of plugin call errors:
// a call the supervisor did not send is transient, then the contract's rule.
func TestEdgeErrorClasses(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want volumemanager.Class
	}{
		{"final status", status.Error(codes.FailedPrecondition, "x"), volumemanager.Final},
		{"uncertain status", status.Error(codes.DeadlineExceeded, "x"), volumemanager.UncertainError},
		{"no status", errors.New("connection reset"), volumemanager.UncertainError},
		{"died mid-call", fmt.Errorf("plugin %q: %w", "csi", supervisor.ErrPluginExited), volumemanager.UncertainError},
		{"not sent", fmt.Errorf("plugin %q: %w (%w)", "csi", supervisor.ErrPluginExited, supervisor.ErrNotSent), volumemanager.Transient},
		{"not attempted by the plugin", volumeerr.NotAttempted(codes.Internal, "NodeGetCapabilities: driver restarting"), volumemanager.Transient},
		{"host's own error", errors.New("hostPath.type: File: /x is not a file"), volumemanager.Final},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err
			if tt.name != "host's own error" {
				err = fmt.Errorf("wrapped by the manager: %w", edgeError("csi", "Stage", tt.err))
			}
			if got := Classify(err); got != tt.want {
				t.Errorf("class %v, want %v", got, tt.want)
			}
		})
	}
}

// fakeVolumeClient records the requests of a volume plugin.
type fakeVolumeClient struct {
	volumev1.VolumeClient
	calls []string
	err   error
}

func (f *fakeVolumeClient) Stage(_ context.Context, r *volumev1.StageRequest, _ ...grpc.CallOption) (*volumev1.StageResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("stage %s %s %v", r.GetDriver(), r.GetVolumeId(), r.GetStagingPath() != ""))
	return &volumev1.StageResponse{}, f.err
}

func (f *fakeVolumeClient) Publish(_ context.Context, r *volumev1.PublishRequest, _ ...grpc.CallOption) (*volumev1.PublishResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("publish %s %s staged=%v target=%s ephemeral=%s", r.GetDriver(), r.GetVolumeId(),
		r.GetStagingPath() != "", r.GetTargetPath(), r.GetVolumeContext()["csi.storage.k8s.io/ephemeral"]))
	return &volumev1.PublishResponse{}, f.err
}

func (f *fakeVolumeClient) Unpublish(_ context.Context, r *volumev1.UnpublishRequest, _ ...grpc.CallOption) (*volumev1.UnpublishResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("unpublish %s %s", r.GetDriver(), r.GetVolumeId()))
	return &volumev1.UnpublishResponse{}, f.err
}

type fakeClients map[string]volumev1.VolumeClient

func (f fakeClients) Volume(name string) (volumev1.VolumeClient, error) {
	if c, ok := f[name]; ok {
		return c, nil
	}
	return nil, supervisor.ErrUnknownPlugin
}

// TestCSIVolumesRouteByDriver sends a CSI volume to the plugin serving
// its driver, with the paths and context the contract asks for, and fails
// a driver no plugin serves with an error naming the driver.
func TestCSIVolumesRouteByDriver(t *testing.T) {
	root := t.TempDir()
	fc := &fakeVolumeClient{}
	c := &csiVolumes{root: root, host: hostvolumes.New(root, nil), clients: fakeClients{"csi": fc}, routes: map[string]string{"loop": "csi"}}
	p := &Plugins{host: hostvolumes.New(root, nil), csi: c}
	shared := volumemanager.Volume{ID: "kubernetes.io/csi/loop^h1", Plugin: volumemanager.PluginCSI, Shared: true, PV: "pv1",
		CSI: &v1.CSIPersistentVolumeSource{Driver: "loop", VolumeHandle: "h1"}}
	inline := volumemanager.Volume{ID: "kubernetes.io/csi/u1-scratch", Plugin: volumemanager.PluginCSI,
		CSI: &v1.CSIPersistentVolumeSource{Driver: "loop", VolumeHandle: "u1-scratch"}}
	ctx := context.Background()
	if err := p.Stage(ctx, shared); err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(ctx, volumemanager.PodVolume{Pod: "u1", Name: "data", Volume: shared}); err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(ctx, volumemanager.PodVolume{Pod: "u1", Name: "scratch", Volume: inline}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"stage loop h1 true",
		"publish loop h1 staged=true target=" + root + "/pods/u1/volumes/kubernetes.io~csi/data/mount ephemeral=",
		"publish loop u1-scratch staged=false target=" + root + "/pods/u1/volumes/kubernetes.io~csi/scratch/mount ephemeral=true",
	}
	if strings.Join(fc.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls\n%s\nwant\n%s", strings.Join(fc.calls, "\n"), strings.Join(want, "\n"))
	}
	data, err := os.ReadFile(filepath.Join(root, "pods/u1/volumes/kubernetes.io~csi/data/vol_data.json"))
	if want := `{"driverName":"loop","volumeHandle":"h1","specVolID":"data","volumeLifecycleMode":"Persistent","persistentVolume":"pv1"}`; string(data) != want {
		t.Errorf("vol_data.json %s (%v), want %s", data, err, want)
	}
	for _, name := range []string{"data", "scratch"} {
		if err := p.Unpublish(ctx, volumemanager.PodVolume{Pod: "u1", Name: name, Volume: map[string]volumemanager.Volume{"data": shared, "scratch": inline}[name]}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "pods", "u1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the pod's directory after unpublish: %v", err)
	}
	other := shared
	other.CSI = &v1.CSIPersistentVolumeSource{Driver: "nfs.example.com", VolumeHandle: "h"}
	err = p.Stage(ctx, other)
	if !errors.Is(err, ErrNoVolumePlugin) || !strings.Contains(err.Error(), `csi driver "nfs.example.com"`) {
		t.Errorf("unserved driver: %v", err)
	}
	if Classify(err) != volumemanager.Final {
		t.Errorf("unserved driver is %v, want final", Classify(err))
	}
}

func (f *fakeVolumeClient) Unstage(_ context.Context, r *volumev1.UnstageRequest, _ ...grpc.CallOption) (*volumev1.UnstageResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("unstage %s %s", r.GetDriver(), r.GetVolumeId()))
	return &volumev1.UnstageResponse{}, f.err
}

// TestCSIUnstageLeavesNoDirectory: after an unstage nothing of the
// volume is left under the plugins directory, neither the empty
// globalmount (the driver unmounts it and may keep it) nor its parents.
func TestCSIUnstageLeavesNoDirectory(t *testing.T) {
	root := t.TempDir()
	fc := &fakeVolumeClient{}
	c := &csiVolumes{root: root, host: hostvolumes.New(root, nil), clients: fakeClients{"csi": fc}, routes: map[string]string{"loop": "csi"}}
	v := volumemanager.Volume{ID: "kubernetes.io/csi/loop^h1", Plugin: volumemanager.PluginCSI, Shared: true,
		CSI: &v1.CSIPersistentVolumeSource{Driver: "loop", VolumeHandle: "h1"}}
	ctx := context.Background()
	if err := c.Stage(ctx, v); err != nil {
		t.Fatal(err)
	}
	if err := c.Unstage(ctx, v); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "plugins", "kubernetes.io~csi", "loop")); !errors.Is(err, os.ErrNotExist) {
		left, _ := filepath.Glob(filepath.Join(root, "plugins", "kubernetes.io~csi", "*", "*", "*"))
		t.Errorf("left after unstage: %v (%v)", left, err)
	}
}

// modeClient records the access modes of Stage and Publish.
type modeClient struct {
	volumev1.VolumeClient
	calls []string
}

func (f *modeClient) Stage(_ context.Context, r *volumev1.StageRequest, _ ...grpc.CallOption) (*volumev1.StageResponse, error) {
	f.calls = append(f.calls, "stage "+r.GetCapability().GetAccessMode().String())
	return &volumev1.StageResponse{}, nil
}

func (f *modeClient) Publish(_ context.Context, r *volumev1.PublishRequest, _ ...grpc.CallOption) (*volumev1.PublishResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("publish %s readonly=%v", r.GetCapability().GetAccessMode(), r.GetReadonly()))
	return &volumev1.PublishResponse{}, nil
}

// TestCSIStageWithTheVolumesAccessMode: a shared CSI volume is staged and
// published with the access mode of the volume (its PersistentVolume),
// not of the pod that happens to come first: a read-only claim is a
// read-only publish of a writable stage, so a writable pod after it
// publishes on a writable stage.
func TestCSIStageWithTheVolumesAccessMode(t *testing.T) {
	src := func(ro bool) *v1.CSIPersistentVolumeSource {
		return &v1.CSIPersistentVolumeSource{Driver: "loop", VolumeHandle: "h1", ReadOnly: ro}
	}
	tests := []struct {
		name string
		vol  volumemanager.Volume
		want string
	}{
		{"read-only claim of a writable volume", volumemanager.Volume{ReadOnly: true, CSI: src(false)},
			"stage ACCESS_MODE_SINGLE_NODE_WRITER,publish ACCESS_MODE_SINGLE_NODE_WRITER readonly=true"},
		{"writable claim", volumemanager.Volume{CSI: src(false)},
			"stage ACCESS_MODE_SINGLE_NODE_WRITER,publish ACCESS_MODE_SINGLE_NODE_WRITER readonly=false"},
		{"read-only volume", volumemanager.Volume{ReadOnly: true, CSI: src(true)},
			"stage ACCESS_MODE_SINGLE_NODE_READER_ONLY,publish ACCESS_MODE_SINGLE_NODE_READER_ONLY readonly=true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			cl := &modeClient{}
			c := &csiVolumes{root: root, host: hostvolumes.New(root, nil), clients: fakeClients{"csi": cl}, routes: map[string]string{"loop": "csi"}}
			v := tt.vol
			v.ID, v.Plugin, v.Shared, v.PV = "kubernetes.io/csi/loop^h1", volumemanager.PluginCSI, true, "pv1"
			if err := c.Stage(context.Background(), v); err != nil {
				t.Fatal(err)
			}
			if err := c.Publish(context.Background(), volumemanager.PodVolume{Pod: "u1", Name: "data", Volume: v}); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(cl.calls, ","); got != tt.want {
				t.Errorf("calls %s, want %s", got, tt.want)
			}
		})
	}
}

// contextClient records the publish contexts of Stage, Publish and
// MapBlock, and their secrets when there are any.
type contextClient struct {
	volumev1.VolumeClient
	calls []string
}

func (f *contextClient) Stage(_ context.Context, r *volumev1.StageRequest, _ ...grpc.CallOption) (*volumev1.StageResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("stage %v", r.GetPublishContext())+secretsNote(r.GetSecrets()))
	return &volumev1.StageResponse{}, nil
}

func (f *contextClient) Publish(_ context.Context, r *volumev1.PublishRequest, _ ...grpc.CallOption) (*volumev1.PublishResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("publish %v", r.GetPublishContext())+secretsNote(r.GetSecrets()))
	return &volumev1.PublishResponse{}, nil
}

func (f *contextClient) MapBlock(_ context.Context, r *volumev1.MapBlockRequest, _ ...grpc.CallOption) (*volumev1.MapBlockResponse, error) {
	f.calls = append(f.calls, fmt.Sprintf("map %v", r.GetPublishContext())+secretsNote(r.GetSecrets()))
	return &volumev1.MapBlockResponse{}, nil
}

// secretsNote shows a request's secrets, nothing when it has none.
func secretsNote(secrets map[string]string) string {
	if len(secrets) == 0 {
		return ""
	}
	return fmt.Sprintf(" secrets=%v", secrets)
}

// TestCSIPublishContext: the publish context of a volume's attachment
// (a VolumeAttachment's attachmentMetadata) reaches NodeStage, NodePublish
// and the block publish.
func TestCSIPublishContext(t *testing.T) {
	root := t.TempDir()
	cl := &contextClient{}
	c := &csiVolumes{root: root, host: hostvolumes.New(root, nil), clients: fakeClients{"csi": cl}, routes: map[string]string{"loop": "csi"}}
	v := volumemanager.Volume{ID: "kubernetes.io/csi/loop^h1", Plugin: volumemanager.PluginCSI, Shared: true, PV: "pv1", Attach: true,
		PublishContext: map[string]string{"lun": "3"}, CSI: &v1.CSIPersistentVolumeSource{Driver: "loop", VolumeHandle: "h1"}}
	ctx := context.Background()
	if err := c.Stage(ctx, v); err != nil {
		t.Fatal(err)
	}
	if err := c.Publish(ctx, volumemanager.PodVolume{Pod: "u1", Name: "data", Volume: v}); err != nil {
		t.Fatal(err)
	}
	v.Block = true
	if err := c.Map(ctx, volumemanager.PodVolume{Pod: "u2", Name: "raw", Volume: v}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(cl.calls, ","), "stage map[lun:3],publish map[lun:3],map map[lun:3]"; got != want {
		t.Errorf("calls %s, want %s", got, want)
	}
}
