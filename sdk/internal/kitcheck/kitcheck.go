// Package kitcheck holds what the conformance kits sdk/runtimetest and
// sdk/volumetest check alike: the status code a call answers with, and the
// rules of the identity service every plugin serves. It exists for the two
// kits; nothing else imports it.
package kitcheck

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podhost/podhost/pluginapi"
	pluginv1 "github.com/podhost/podhost/proto/plugin/v1"
)

// CallContext returns a context for one call, bounded by timeout and by t.
func CallContext(t testing.TB, timeout time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	return ctx
}

// WantCode fails t unless err has the code want, and reports whether it has.
func WantCode(t testing.TB, call string, err error, want codes.Code) bool {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Errorf("%s: got %v (%v); want %v", call, got, err, want)
		return false
	}
	return true
}

// MustOK stops t unless err is nil.
func MustOK(t testing.TB, call string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: got %v; want OK", call, err)
	}
}

// Configure passes config to the plugin, as the host does before any other
// call, and stops t unless the plugin accepts it. hostVersion names the kit.
func Configure(t testing.TB, ctx context.Context, id pluginv1.IdentityClient, config, hostVersion string) {
	t.Helper()
	cfg, err := id.Configure(ctx, &pluginv1.ConfigureRequest{ConfigJson: []byte(config), HostVersion: hostVersion})
	if err != nil || len(cfg.GetErrors()) > 0 {
		t.Fatalf("Configure(%s) = %v, %v; want no errors", config, cfg.GetErrors(), err)
	}
}

// CheckInfo checks what every plugin's GetInfo answers: the plugin's name,
// its kind, a version and the contract version the kits check against.
func CheckInfo(t testing.TB, info *pluginv1.GetInfoResponse, name string, kind pluginv1.Kind) {
	if got := info.GetName(); got != name {
		t.Errorf("GetInfo name: got %q; want %q", got, name)
	}
	if got := info.GetKind(); got != kind {
		t.Errorf("GetInfo kind: got %v; want %v", got, kind)
	}
	if info.GetPluginVersion() == "" {
		t.Errorf("GetInfo plugin_version: got empty; want the plugin's version")
	}
	if !slices.Contains(info.GetContractVersions(), pluginapi.ContractVersion) {
		t.Errorf("GetInfo contract_versions: got %q; want it to list %q", info.GetContractVersions(), pluginapi.ContractVersion)
	}
}

// CheckConfigureTwice checks that the plugin accepts config twice over;
// ctx gives a context for each call.
func CheckConfigureTwice(t testing.TB, ctx func() context.Context, id pluginv1.IdentityClient, config string) {
	for range 2 {
		resp, err := id.Configure(ctx(), &pluginv1.ConfigureRequest{ConfigJson: []byte(config)})
		MustOK(t, "Configure", err)
		if len(resp.GetErrors()) > 0 {
			t.Errorf("Configure(%s): got errors %v; want none", config, resp.GetErrors())
		}
	}
}

// CheckProbe checks that the plugin answers Probe ready.
func CheckProbe(t testing.TB, ctx context.Context, id pluginv1.IdentityClient) {
	resp, err := id.Probe(ctx, &pluginv1.ProbeRequest{})
	MustOK(t, "Probe", err)
	if !resp.GetReady() {
		t.Errorf("Probe: got not ready (%q); want ready", resp.GetMessage())
	}
}
