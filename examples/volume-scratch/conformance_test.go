package main

import (
	"fmt"
	"testing"

	"github.com/podhost/podhost/sdk/volumetest"
)

// setup serves volume-scratch with its volumes under a fresh root. The kit
// interrupts Stage and Publish at sdk.Midway.
func setup(t *testing.T) volumetest.Setup {
	return volumetest.Setup{Plugin: newPlugin("test"), Config: fmt.Sprintf(`{"root": %q}`, t.TempDir())}
}

func TestConformance(t *testing.T) {
	volumetest.Run(t, setup)
}
