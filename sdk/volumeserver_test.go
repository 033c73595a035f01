package sdk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/pluginapi"
	volumev1 "github.com/podhost/podhost/proto/volume/v1"
)

// fakeVolumes answers every call with err and records the requests.
type fakeVolumes struct {
	err   error
	calls []any
}

func (f *fakeVolumes) Stage(_ context.Context, r StageRequest) error {
	f.calls = append(f.calls, r)
	return f.err
}

func (f *fakeVolumes) Unstage(_ context.Context, r UnstageRequest) error {
	f.calls = append(f.calls, r)
	return f.err
}

func (f *fakeVolumes) Publish(_ context.Context, r PublishRequest) error {
	f.calls = append(f.calls, r)
	return f.err
}

func (f *fakeVolumes) Unpublish(_ context.Context, r UnpublishRequest) error {
	f.calls = append(f.calls, r)
	return f.err
}

// fullVolumes implements every optional interface.
type fullVolumes struct{ fakeVolumes }

func (f *fullVolumes) Metrics(context.Context, MetricsRequest) (VolumeUsage, error) {
	return VolumeUsage{TotalBytes: 1}, f.err
}

func (f *fullVolumes) Reconstruct(context.Context, string) (Reconstructed, bool, error) {
	return Reconstructed{VolumeID: "v"}, true, f.err
}

func (f *fullVolumes) Attach(context.Context, AttachRequest) (map[string]string, error) {
	return map[string]string{"lun": "1"}, f.err
}

func (f *fullVolumes) Detach(context.Context, DetachRequest) error { return f.err }

func (f *fullVolumes) MapBlock(context.Context, PublishRequest) error { return f.err }

func (f *fullVolumes) UnmapBlock(context.Context, UnpublishRequest) error { return f.err }

func serverFor(t *testing.T, p Plugin) *volumeServer {
	t.Helper()
	srv, _, err := p.VolumeServer()
	if err != nil {
		t.Fatal(err)
	}
	return srv.(*volumeServer)
}

// calls sends each call of the Volume service with the given volume ID and
// the paths set, or each path empty in turn.
func calls(s volumev1.VolumeServer, id, staging, target string) map[string]func(context.Context) error {
	return map[string]func(context.Context) error{
		"Stage": func(ctx context.Context) error {
			_, err := s.Stage(ctx, &volumev1.StageRequest{VolumeId: id, StagingPath: staging})
			return err
		},
		"Unstage": func(ctx context.Context) error {
			_, err := s.Unstage(ctx, &volumev1.UnstageRequest{VolumeId: id, StagingPath: staging})
			return err
		},
		"Publish": func(ctx context.Context) error {
			_, err := s.Publish(ctx, &volumev1.PublishRequest{VolumeId: id, StagingPath: staging, TargetPath: target})
			return err
		},
		"Unpublish": func(ctx context.Context) error {
			_, err := s.Unpublish(ctx, &volumev1.UnpublishRequest{VolumeId: id, TargetPath: target})
			return err
		},
		"GetMetrics": func(ctx context.Context) error {
			_, err := s.GetMetrics(ctx, &volumev1.GetMetricsRequest{VolumeId: id, VolumePath: target})
			return err
		},
		"Attach": func(ctx context.Context) error {
			_, err := s.Attach(ctx, &volumev1.AttachRequest{VolumeId: id})
			return err
		},
		"Detach": func(ctx context.Context) error {
			_, err := s.Detach(ctx, &volumev1.DetachRequest{VolumeId: id})
			return err
		},
		"MapBlock": func(ctx context.Context) error {
			_, err := s.MapBlock(ctx, &volumev1.MapBlockRequest{VolumeId: id, StagingPath: staging, TargetPath: target})
			return err
		},
		"UnmapBlock": func(ctx context.Context) error {
			_, err := s.UnmapBlock(ctx, &volumev1.UnmapBlockRequest{VolumeId: id, TargetPath: target})
			return err
		},
	}
}

// TestVolumeArguments: a request with a required argument missing, a
// relative path or a volume ID that is not one path element is
// INVALID_ARGUMENT naming the field, and never reaches the plugin.
func TestVolumeArguments(t *testing.T) {
	tests := []struct {
		name, id, staging, target string
		field                     string // named by the message; empty: the call reaches the plugin
		skip                      []string
	}{
		{name: "all set", id: "v1", staging: "/s", target: "/t"},
		{name: "no volume_id", staging: "/s", target: "/t", field: "volume_id is required"},
		{name: "traversal", id: "../../etc", staging: "/s", target: "/t", field: `volume_id "../../etc" is not a single path element`},
		{name: "slash", id: "a/b", staging: "/s", target: "/t", field: "volume_id"},
		{name: "dot-dot", id: "..", staging: "/s", target: "/t", field: "volume_id"},
		{name: "dot", id: ".", staging: "/s", target: "/t", field: "volume_id"},
		{name: "NUL", id: "a\x00b", staging: "/s", target: "/t", field: "volume_id"},
		{name: "no staging_path", id: "v1", target: "/t", field: "staging_path is required",
			skip: []string{"Unpublish", "GetMetrics", "Attach", "Detach", "UnmapBlock"}},
		{name: "relative staging_path", id: "v1", staging: "s", target: "/t", field: `staging_path "s" is not an absolute path`,
			skip: []string{"Unpublish", "GetMetrics", "Attach", "Detach", "UnmapBlock"}},
		{name: "no target_path", id: "v1", staging: "/s", field: "_path is required",
			skip: []string{"Stage", "Unstage", "Attach", "Detach"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fullVolumes{}
			s := serverFor(t, Plugin{Name: "v", Kind: KindVolume, Volumes: f})
			for call, send := range calls(s, tt.id, tt.staging, tt.target) {
				if slices.Contains(tt.skip, call) {
					continue
				}
				f.calls = nil
				err := send(t.Context())
				switch {
				case tt.field == "" && err != nil:
					t.Errorf("%s: got %v; want OK", call, err)
				case tt.field != "" && (status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tt.field)):
					t.Errorf("%s: got %v; want INVALID_ARGUMENT naming %q", call, err, tt.field)
				case tt.field != "" && len(f.calls) > 0:
					t.Errorf("%s: the plugin was called with %v; want the request refused before", call, f.calls)
				}
			}
		})
	}
}

// TestOpaqueVolumeIDs: a plugin that opts out gets any non-empty ID.
func TestOpaqueVolumeIDs(t *testing.T) {
	f := &fakeVolumes{}
	s := serverFor(t, Plugin{Name: "v", Kind: KindVolume, Volumes: f, OpaqueVolumeIDs: true})
	if _, err := s.Stage(t.Context(), &volumev1.StageRequest{VolumeId: "pool/vol-1", StagingPath: "/s"}); err != nil {
		t.Errorf("Stage of pool/vol-1: got %v; want OK", err)
	}
	if _, err := s.Stage(t.Context(), &volumev1.StageRequest{StagingPath: "/s"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Stage without volume_id: got %v; want INVALID_ARGUMENT", err)
	}
}

func TestVolumeErrorCodes(t *testing.T) {
	tests := []struct {
		err  error
		want codes.Code
	}{
		{nil, codes.OK},
		{fmt.Errorf("volume v1: %w", ErrNotFound), codes.NotFound},
		{fmt.Errorf("volume v1: %w", ErrNotStaged), codes.FailedPrecondition},
		{fmt.Errorf("path /s: %w", ErrAlreadyExists), codes.AlreadyExists},
		{fmt.Errorf("size: %w", ErrInvalidArgument), codes.InvalidArgument},
		{fmt.Errorf("mkfs: %w", ErrUncertain), codes.Aborted},
		{fmt.Errorf("mount: %w", context.Canceled), codes.Canceled},
		{fmt.Errorf("mount: %w", context.DeadlineExceeded), codes.DeadlineExceeded},
		{errors.Join(fmt.Errorf("v1: %w", ErrNotStaged), context.Canceled), codes.Canceled},
		{errors.Join(ErrNotFound, ErrUncertain), codes.Aborted},
		{status.Error(codes.Unavailable, "backend down"), codes.Unavailable},
		{fmt.Errorf("backend: %w", status.Error(codes.PermissionDenied, "no")), codes.PermissionDenied},
		{errors.New("disk full"), codes.Aborted},
	}
	for _, tt := range tests {
		f := &fakeVolumes{err: tt.err}
		s := serverFor(t, Plugin{Name: "v", Kind: KindVolume, Volumes: f})
		_, err := s.Publish(t.Context(), &volumev1.PublishRequest{VolumeId: "v1", StagingPath: "/s", TargetPath: "/t"})
		if got := status.Code(err); got != tt.want {
			t.Errorf("Publish answering %v: got %v (%v); want %v", tt.err, got, err, tt.want)
		}
	}
}

func TestVolumeCapabilities(t *testing.T) {
	tests := []struct {
		name     string
		p        Plugin
		want     *volumev1.GetCapabilitiesResponse
		wantInfo []string
		wantErr  string
	}{
		{
			name: "core only", p: Plugin{Volumes: &fakeVolumes{}},
			want: &volumev1.GetCapabilitiesResponse{StageUnstage: true},
		},
		{
			name: "every interface", p: Plugin{Volumes: &fullVolumes{}, Capabilities: []string{pluginapi.CapVolumeFC}},
			want:     &volumev1.GetCapabilitiesResponse{RequiresAttach: true, StageUnstage: true, Block: true, SupportsMetrics: true, Reconstruction: true},
			wantInfo: []string{pluginapi.CapVolumeMetrics, pluginapi.CapVolumeBlock, pluginapi.CapVolumeReconstruct, pluginapi.CapVolumeFC},
		},
		{
			name: "listed and implemented", p: Plugin{Volumes: &fullVolumes{}, Capabilities: []string{pluginapi.CapVolumeMetrics}},
			want:     &volumev1.GetCapabilitiesResponse{RequiresAttach: true, StageUnstage: true, Block: true, SupportsMetrics: true, Reconstruction: true},
			wantInfo: []string{pluginapi.CapVolumeMetrics, pluginapi.CapVolumeBlock, pluginapi.CapVolumeReconstruct},
		},
		{
			name: "listed, not implemented", p: Plugin{Volumes: &fakeVolumes{}, Capabilities: []string{pluginapi.CapVolumeMetrics}},
			wantErr: `capability "volume.metrics" is listed but Volumes`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.p.Name, tt.p.Kind = "v", KindVolume
			srv, caps, err := tt.p.VolumeServer()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("VolumeServer: got %v; want an error saying %q", err, tt.wantErr)
				}
				if _, err := tt.p.register(); err == nil {
					t.Errorf("register: got no error; want the plugin refused")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := srv.GetCapabilities(t.Context(), &volumev1.GetCapabilitiesRequest{})
			if got.String() != tt.want.String() {
				t.Errorf("GetCapabilities: got %v; want %v", got, tt.want)
			}
			if !slices.Equal(caps, tt.wantInfo) {
				t.Errorf("GetInfo capabilities: got %q; want %q", caps, tt.wantInfo)
			}
		})
	}
}

// TestVolumeOptionalCalls: a call whose interface the plugin does not
// implement is UNIMPLEMENTED, and a block volume is refused.
func TestVolumeOptionalCalls(t *testing.T) {
	s := serverFor(t, Plugin{Name: "v", Kind: KindVolume, Volumes: &fakeVolumes{}})
	for call, send := range calls(s, "v1", "/s", "/t") {
		err := send(t.Context())
		want := codes.Unimplemented
		if slices.Contains([]string{"Stage", "Unstage", "Publish", "Unpublish"}, call) {
			want = codes.OK
		}
		if status.Code(err) != want {
			t.Errorf("%s: got %v; want %v", call, err, want)
		}
	}
	block := &volumev1.Capability{AccessType: &volumev1.Capability_Block{Block: &volumev1.Capability_BlockVolume{}}}
	_, err := s.Stage(t.Context(), &volumev1.StageRequest{VolumeId: "v1", StagingPath: "/s", Capability: block})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "capability") {
		t.Errorf("Stage of a block volume: got %v; want INVALID_ARGUMENT naming capability", err)
	}
}

// TestVolumeRequests: the plugin gets the request's fields as plain Go
// values, with the default access mode filled in.
func TestVolumeRequests(t *testing.T) {
	f := &fakeVolumes{}
	s := serverFor(t, Plugin{Name: "v", Kind: KindVolume, Volumes: f})
	_, err := s.Publish(t.Context(), &volumev1.PublishRequest{
		VolumeId: "v1", StagingPath: "/s", TargetPath: "/t", Readonly: true, Driver: "d", SecretsDir: "/sec",
		VolumeContext: map[string]string{"k": "v"},
		Capability:    &volumev1.Capability{AccessType: &volumev1.Capability_Mount{Mount: &volumev1.Capability_MountVolume{FsType: "ext4"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := PublishRequest{
		VolumeID: "v1", StagingPath: "/s", TargetPath: "/t", Readonly: true, Driver: "d", SecretsDir: "/sec",
		VolumeContext: map[string]string{"k": "v"},
		Capability:    Capability{FSType: "ext4", AccessMode: volumev1.AccessMode_ACCESS_MODE_SINGLE_NODE_WRITER},
	}
	if got := fmt.Sprint(f.calls); got != fmt.Sprint([]any{want}) {
		t.Errorf("Publish request: got %s; want %v", got, want)
	}
}
