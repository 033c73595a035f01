package runtimetestfake

import (
	"testing"

	"github.com/podhost/podhost/sdk"
	"github.com/podhost/podhost/sdk/runtimetest"
)

// TestConformance keeps the fake honest: it must pass the same kit as the
// real plugins. Only this test reaches into sdk/: the fake itself is a
// bare runtimev1.RuntimeServer, so the host's tests that use it import
// nothing from the plugin side.
func TestConformance(t *testing.T) {
	runtimetest.Run(t, func(t *testing.T) runtimetest.Setup {
		return runtimetest.Setup{Plugin: sdk.Plugin{Name: "runtime-fake", Version: "test", Kind: sdk.KindRuntime, Runtime: New(nil)}, ExecSucceeds: []string{"true"}, ExecFails: []string{"false"}}
	})
}
