package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/podhost/podhost/plugins/internal/scsitest"
	"github.com/podhost/podhost/sdk/volumetest"
)

func TestMain(m *testing.M) {
	scsitest.Main() // the fake iscsiadm and multipath, when re-executed as one
	os.Exit(m.Run())
}

const portal = "10.0.0.1:3260"

// now makes the plugin's polls immediate.
func now(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

// iscsiServer returns a server configured for the fake tree f.
func iscsiServer(t *testing.T, f *scsitest.Fake) (*server, string) {
	s := newServer()
	s.wait = now
	cfg := fmt.Sprintf(`{"sysfsRoot":%q,"devRoot":%q,"iscsiadm":%q,"multipath":%q,"stateDir":%q}`,
		f.Tree.Sys, f.Tree.Dev, f.Command("iscsiadm"), f.Command("multipath"), filepath.Join(f.Root, "state"))
	c, errs := parseConfig([]byte(cfg))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	s.cfg.Store(&c)
	return s, cfg
}

// iscsiSetup serves volume-iscsi against a fresh fake tree: each volume
// the kit asks for is a target of its own whose LUN 0 is a loop device.
func iscsiSetup(t *testing.T) volumetest.Setup {
	scsitest.NeedRoot(t)
	f := scsitest.New(t)
	p := newPlugin("test")
	s := p.Volume.(*server)
	s.wait = now
	_, cfg := iscsiServer(t, f)
	n := 0
	return volumetest.Setup{
		Plugin: p,
		Config: cfg,
		Midway: &s.Volumes.Midway,
		NewVolume: func(t *testing.T) volumetest.Volume {
			n++
			iqn := fmt.Sprintf("iqn.2026-12.dev.podhost:vol%d", n)
			f.AddTarget(scsitest.Target{Portal: portal, IQN: iqn, LUNs: map[string]string{"0": scsitest.Loop(t, 16<<20)}})
			return volumetest.Volume{ID: fmt.Sprintf("iscsi-%d", n), Context: map[string]string{keyPortal: "10.0.0.1", keyIQN: iqn, keyLUN: "0"}}
		},
	}
}

func TestConformance(t *testing.T) {
	volumetest.Run(t, iscsiSetup)
}
