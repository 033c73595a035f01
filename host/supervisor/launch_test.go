package supervisor

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/pluginapi"
	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
)

func TestPluginEnv(t *testing.T) {
	t.Parallel()
	host := []string{"PATH=/bin", "PLUGIN_PROTOCOL_VERSIONS=9", "PLUGIN_UNIX_SOCKET_DIR=/tmp/x", pluginapi.Handshake.MagicCookieKey + "=stale", "HOME=/root"}
	got := pluginEnv(host, "/var/lib/podhost/plugins")
	want := []string{"PATH=/bin", "HOME=/root", "PLUGIN_UNIX_SOCKET_DIR=/var/lib/podhost/plugins"}
	if !slices.Equal(got, want) {
		t.Errorf("pluginEnv = %v, want %v", got, want)
	}
	if got := pluginEnv(host, ""); !slices.Equal(got, want[:2]) {
		t.Errorf("pluginEnv without socket dir = %v, want %v", got, want[:2])
	}
}

func TestCheckInfo(t *testing.T) {
	t.Parallel()
	spec := PluginSpec{Name: "p", Kind: pluginapi.KindVolume}
	tests := []struct {
		name string
		info *pluginv1.GetInfoResponse
		want string // "" = accepted
	}{
		{"ok", &pluginv1.GetInfoResponse{Kind: pluginv1.Kind_KIND_VOLUME, ContractVersions: []string{"v0", "v1"}}, ""},
		{"wrong kind", &pluginv1.GetInfoResponse{Kind: pluginv1.Kind_KIND_RUNTIME, ContractVersions: []string{"v1"}}, `plugin "p" is a runtime plugin, spec declares volume`},
		{"no kind", &pluginv1.GetInfoResponse{ContractVersions: []string{"v1"}}, `plugin "p" declares no known kind`},
		{"old contract", &pluginv1.GetInfoResponse{Kind: pluginv1.Kind_KIND_VOLUME, ContractVersions: []string{"v0"}}, `plugin "p" speaks contract versions [v0], host needs v1`},
		{"no contract", &pluginv1.GetInfoResponse{Kind: pluginv1.Kind_KIND_VOLUME}, `plugin "p" speaks contract versions [], host needs v1`},
	}
	for _, tc := range tests {
		err := checkInfo(spec, tc.info)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrPluginRefused)):
			t.Errorf("%s: err = %v, want a refusal containing %q", tc.name, err, tc.want)
		}
	}
}

func TestCallGuardMapsErrors(t *testing.T) {
	t.Parallel()
	unavailable := status.Error(codes.Unavailable, "connection closed")
	notFound := status.Error(codes.NotFound, "no such volume")

	alive := &callGuard{plugin: "p", died: context.Background(), grace: time.Millisecond}
	if err := alive.mapErr(context.Background(), notFound); err != notFound {
		t.Errorf("alive, NotFound: %v", err)
	}
	if err := alive.mapErr(context.Background(), unavailable); err != unavailable {
		t.Errorf("alive, Unavailable after grace: %v", err)
	}
	if err := alive.mapErr(context.Background(), nil); err != nil {
		t.Errorf("alive, nil: %v", err)
	}

	diedCtx, markDied := context.WithCancel(context.Background())
	markDied()
	dead := &callGuard{plugin: "p", died: diedCtx, grace: time.Hour}
	for _, in := range []error{unavailable, notFound, context.Canceled} {
		err := dead.mapErr(context.Background(), in)
		if !errors.Is(err, ErrPluginExited) || !errors.Is(err, in) || !strings.Contains(err.Error(), `plugin "p"`) {
			t.Errorf("dead, %v: %v", in, err)
		}
	}
	err := dead.unary(context.Background(), "/m", nil, nil, nil, func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		t.Error("a call on a dead instance was sent")
		return nil
	})
	if !errors.Is(err, ErrPluginExited) || !errors.Is(err, ErrNotSent) {
		t.Errorf("call on dead instance: %v; want ErrPluginExited and ErrNotSent", err)
	}
}

func TestCallGuardCutsInFlightCall(t *testing.T) {
	t.Parallel()
	died, markDied := context.WithCancel(context.Background())
	g := &callGuard{plugin: "p", died: died, grace: time.Hour}
	entered := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- g.unary(t.Context(), "/m", nil, nil, nil, func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
			close(entered)
			<-ctx.Done()
			return status.FromContextError(ctx.Err()).Err()
		})
	}()
	<-entered
	markDied()
	if err := <-errc; !errors.Is(err, ErrPluginExited) || errors.Is(err, ErrNotSent) {
		t.Errorf("in-flight call = %v, want ErrPluginExited and not ErrNotSent (it was sent)", err)
	}
}
