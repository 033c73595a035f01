package main

import (
	"fmt"
	"testing"

	"github.com/podhost/podhost/sdk/volumetest"
)

// setup serves volume-scratch with its volumes under a fresh root, and
// lets the kit interrupt Stage and Publish at scratch's midway hook.
func setup(t *testing.T) (volumetest.Setup, *server) {
	p := newPlugin("test")
	s := p.Volume.(*server)
	return volumetest.Setup{Plugin: p, Config: fmt.Sprintf(`{"root": %q}`, t.TempDir()), Midway: &s.scratch.midway}, s
}

func TestConformance(t *testing.T) {
	volumetest.Run(t, func(t *testing.T) volumetest.Setup {
		s, _ := setup(t)
		return s
	})
}
