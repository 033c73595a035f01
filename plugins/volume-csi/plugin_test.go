package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/podhost/podhost/plugins/internal/plugintest"
	"github.com/podhost/podhost/sdk"
	"github.com/podhost/podhost/sdk/volumetest"
)

func TestPluginIsServable(t *testing.T) {
	plugintest.CheckServable(t, newPlugin, "volume-csi", sdk.KindVolume)
}

// TestConformance runs the volume kit against volume-csi in front of the
// fake driver, which stages and serves stats.
func TestConformance(t *testing.T) {
	volumetest.Run(t, func(t *testing.T) volumetest.Setup {
		f := newFakeDriver("fake.csi", stageCap, statsCap)
		sock := filepath.Join(socketDir(t), "d.sock")
		f.serve(t, sock)
		p := newPlugin("test")
		t.Cleanup(p.Volume.(*server).p.close)
		return volumetest.Setup{
			Plugin: p,
			Config: fmt.Sprintf(`{"drivers":[{"name":"fake.csi","endpoint":"unix://%s"}],"stateDir":%q}`, sock, t.TempDir()),
		}
	})
}
