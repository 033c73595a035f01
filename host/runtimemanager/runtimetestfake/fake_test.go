package runtimetestfake

import (
	"testing"

	"github.com/podhost/podhost/sdk/runtimetest"
)

// TestConformance keeps the fake honest: it must pass the same kit as the
// real plugins.
func TestConformance(t *testing.T) {
	runtimetest.Run(t, func(t *testing.T) runtimetest.Setup {
		return runtimetest.Setup{Plugin: New(nil).Plugin()}
	})
}
