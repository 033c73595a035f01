package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/podhost/podhost/plugins/internal/plugintest"
	"github.com/podhost/podhost/sdk"
	"github.com/podhost/podhost/sdk/volumetest"
)

func TestPluginIsServable(t *testing.T) {
	plugintest.CheckServable(t, newPlugin, "volume-csi", sdk.KindVolume)
}

// TestConformance runs the volume kit against volume-csi in front of the
// fake driver, which stages, serves stats and mounts for real.
func TestConformance(t *testing.T) {
	volumetest.Run(t, func(t *testing.T) volumetest.Setup {
		f := newFakeDriver("fake.csi", stageCap, statsCap)
		f.mounts = true
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

// TestReconfigureKeepsUnchangedDrivers: Configure keeps the connection (and
// its cached facts) of a driver whose config did not change, and replaces
// the one whose config did.
func TestReconfigureKeepsUnchangedDrivers(t *testing.T) {
	specs := startDrivers(t, newFakeDriver("a.csi"), newFakeDriver("b.csi"))
	p := &csiPlugin{}
	t.Cleanup(p.close)
	cfg := func(bTimeout sdk.Duration) config {
		return config{Drivers: []driver{
			{Name: "a.csi", Endpoint: "unix://" + specs[0].socket},
			{Name: "b.csi", Endpoint: "unix://" + specs[1].socket, Timeout: bTimeout},
		}}
	}
	if err := p.configure(cfg(0)); err != nil {
		t.Fatal(err)
	}
	a1, _ := p.driverFor("a.csi")
	b1, _ := p.driverFor("b.csi")
	if err := p.configure(cfg(sdk.Duration(5 * time.Second))); err != nil {
		t.Fatal(err)
	}
	a2, _ := p.driverFor("a.csi")
	b2, _ := p.driverFor("b.csi")
	if a1 != a2 {
		t.Errorf("a.csi, config unchanged: got a new connection; want the old one kept")
	}
	if b1 == b2 || b2.cfg.timeout() != 5*time.Second {
		t.Errorf("b.csi, timeout changed: got the old connection or timeout %v; want a new one with 5s", b2.cfg.timeout())
	}
}
